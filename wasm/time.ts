// RFC 3339 timestamps (the sidecar's `since`/`deadline`, UTF-8 bytes) to Unix milliseconds. Pure; -1
// when invalid. Accepts YYYY-MM-DD[T ]HH:MM:SS[.fraction](Z|±HH:MM).

/** Byte `at` of the text, or -1 past its end. */
function at(text: usize, length: i32, index: i32): i32 {
  return index < length ? <i32>load<u8>(text + <usize>index) : -1;
}

/** `count` digits from `index` as a number no greater than `max`, or -1 (also past the end). */
function digits(text: usize, length: i32, index: i32, count: i32, max: i32): i32 {
  let value = 0;
  for (let i = index; i < index + count; i++) {
    const digit = at(text, length, i) - 0x30;
    if (<u32>digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value > max ? -1 : value;
}

/**
 * Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil, in i32: the
 * year is shifted by 400 — 146097 days — so the floor divisions never see a negative number).
 */
function daysFromCivil(year: i32, month: i32, day: i32): i32 {
  const y = (month <= 2 ? year - 1 : year) + 400;
  const mp = month > 2 ? month - 3 : month + 9;
  return y * 365 + y / 4 - y / 100 + y / 400 + (153 * mp + 2) / 5 + day - 1 - 719468 - 146097;
}

function daysInMonth(year: i32, month: i32): i32 {
  if (month == 2) return (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
  return (month == 4 || month == 6 || month == 9 || month == 11) ? 30 : 31;
}

export function parseIsoMs(text: usize, length: i32): i64 {
  const year = digits(text, length, 0, 4, 9999);
  const month = digits(text, length, 5, 2, 12);
  const day = digits(text, length, 8, 2, 31);
  const hour = digits(text, length, 11, 2, 23);
  const minute = digits(text, length, 14, 2, 59);
  const second = digits(text, length, 17, 2, 60);
  if ((year | (month - 1) | (day - 1) | hour | minute | second) < 0 || day > daysInMonth(year, month)) return -1;
  const sep = at(text, length, 10);
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
    const offsetHours = digits(text, length, index + 1, 2, 23);
    const offsetMins = digits(text, length, index + 4, 2, 59);
    if ((offsetHours | offsetMins) < 0 || at(text, length, index + 3) != 0x3a) return -1;
    offsetMinutes = offsetHours * 60 + offsetMins;
    if (zone == 0x2d) offsetMinutes = -offsetMinutes;
    index += 6;
  } else {
    return -1;
  }
  if (index != length) return -1;

  const days = <i64>daysFromCivil(year, month, day);
  const seconds = days * 86400 + <i64>hour * 3600 + <i64>minute * 60 + <i64>second - <i64>offsetMinutes * 60;
  const ms = seconds * 1000 + <i64>fractionMs;
  return ms < 0 ? -1 : ms;
}
