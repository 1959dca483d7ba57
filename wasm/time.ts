// RFC 3339 timestamps (the sidecar's `since`/`deadline`, UTF-8 bytes) to Unix milliseconds. Pure; -1
// when invalid. Accepts YYYY-MM-DD[T ]HH:MM:SS[.fraction](Z|±HH:MM).

/** Byte `at` of the text, or -1 past its end. */
function at(text: usize, length: i32, index: i32): i32 {
  return index < length ? <i32>load<u8>(text + <usize>index) : -1;
}

/** `count` digits from `index` as a number, or -1 (also past the end). */
function digits(text: usize, length: i32, index: i32, count: i32): i32 {
  let value = 0;
  for (let i = index; i < index + count; i++) {
    const digit = at(text, length, i) - 0x30;
    if (<u32>digit > 9) return -1;
    value = value * 10 + digit;
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

export function parseIsoMs(text: usize, length: i32): i64 {
  const year = digits(text, length, 0, 4);
  const month = digits(text, length, 5, 2);
  const day = digits(text, length, 8, 2);
  const hour = digits(text, length, 11, 2);
  const minute = digits(text, length, 14, 2);
  const second = digits(text, length, 17, 2);
  const sep = at(text, length, 10);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return -1;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return -1;
  if (at(text, length, 4) != 0x2d || at(text, length, 7) != 0x2d || ((sep | 0x20) != 0x74 && sep != 0x20)) return -1;
  if (at(text, length, 13) != 0x3a || at(text, length, 16) != 0x3a) return -1;

  let index = 19;
  let fractionMs = 0;
  if (at(text, length, index) == 0x2e) {
    let scale = 100;
    for (;;) {
      const digit = at(text, length, ++index) - 0x30;
      if (<u32>digit > 9) break;
      fractionMs += digit * scale;
      scale /= 10;
    }
    if (index == 20) return -1;
  }

  let offsetMinutes = 0;
  const zone = at(text, length, index);
  if ((zone | 0x20) == 0x7a) { // 'Z' or 'z'
    index++;
  } else if (zone == 0x2b || zone == 0x2d) {
    const offsetHours = digits(text, length, index + 1, 2);
    const offsetMins = digits(text, length, index + 4, 2);
    if (offsetHours < 0 || offsetHours > 23 || offsetMins < 0 || offsetMins > 59 || at(text, length, index + 3) != 0x3a) return -1;
    offsetMinutes = offsetHours * 60 + offsetMins;
    if (zone == 0x2d) offsetMinutes = -offsetMinutes;
    index += 6;
  } else {
    return -1;
  }
  if (index != length) return -1;

  const days = daysFromCivil(<i64>year, <i64>month, <i64>day);
  const seconds = days * 86400 + <i64>hour * 3600 + <i64>minute * 60 + <i64>second - <i64>offsetMinutes * 60;
  const ms = seconds * 1000 + <i64>fractionMs;
  return ms < 0 ? -1 : ms;
}
