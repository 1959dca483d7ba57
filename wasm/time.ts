// RFC 3339 timestamps (the sidecar's `since`/`deadline`) to Unix milliseconds. Pure; -1 when invalid.
// Accepts YYYY-MM-DD[T ]HH:MM:SS[.fraction](Z|±HH:MM).

function digitsAt(text: string, at: i32, count: i32): i32 {
  let value = 0;
  for (let i = 0; i < count; i++) {
    const c = text.charCodeAt(at + i);
    if (c < 0x30 || c > 0x39) return -1;
    value = value * 10 + (c - 0x30);
  }
  return value;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: i64, month: i64, day: i64): i64 {
  const y = month <= 2 ? year - 1 : year;
  const era = (y >= 0 ? y : y - 399) / 400;
  const yoe = y - era * 400;
  const mp = month > 2 ? month - 3 : month + 9;
  const doy = (153 * mp + 2) / 5 + day - 1;
  const doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

function daysInMonth(year: i32, month: i32): i32 {
  if (month == 2) return (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
  return (month == 4 || month == 6 || month == 9 || month == 11) ? 30 : 31;
}

export function parseIsoMs(text: string): i64 {
  if (text.length < 20) return -1;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59) return -1;
  if (second < 0 || second > 60 || day > daysInMonth(year, month)) return -1;
  const sep = text.charCodeAt(10);
  if (text.charCodeAt(4) != 0x2d || text.charCodeAt(7) != 0x2d || (sep != 0x54 && sep != 0x74 && sep != 0x20)) return -1;
  if (text.charCodeAt(13) != 0x3a || text.charCodeAt(16) != 0x3a) return -1;

  let at = 19;
  let fractionMs = 0;
  if (text.charCodeAt(at) == 0x2e) {
    at++;
    let scale = 100;
    const start = at;
    for (;;) {
      const c = text.charCodeAt(at);
      if (c < 0x30 || c > 0x39) break;
      fractionMs += (c - 0x30) * scale;
      scale /= 10;
      at++;
    }
    if (at == start) return -1;
  }

  let offsetMinutes = 0;
  const zone = text.charCodeAt(at);
  if (zone == 0x5a || zone == 0x7a) {
    at++;
  } else if (zone == 0x2b || zone == 0x2d) {
    const offsetHours = digitsAt(text, at + 1, 2);
    const offsetMins = digitsAt(text, at + 4, 2);
    if (offsetHours < 0 || offsetHours > 23 || offsetMins < 0 || offsetMins > 59 || text.charCodeAt(at + 3) != 0x3a) return -1;
    offsetMinutes = offsetHours * 60 + offsetMins;
    if (zone == 0x2d) offsetMinutes = -offsetMinutes;
    at += 6;
  } else {
    return -1;
  }
  if (at != text.length) return -1;

  const days = daysFromCivil(<i64>year, <i64>month, <i64>day);
  const seconds = days * 86400 + <i64>hour * 3600 + <i64>minute * 60 + <i64>second - <i64>offsetMinutes * 60;
  const ms = seconds * 1000 + <i64>fractionMs;
  return ms < 0 ? -1 : ms;
}
