// Decimal text of a non-negative integer, for log lines; smaller than std toString (no radix tables).

export function decimal(value: u64): string {
  let out = "";
  do {
    out = String.fromCharCode(0x30 + <i32>(value % 10)) + out;
    value /= 10;
  } while (value != 0);
  return out;
}
