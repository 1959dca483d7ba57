// Kuma's resource name rule (letters, digits, '-', '_', '.'; a letter or digit at each end; at most 253
// characters), checked in one place for policies, stored resources and the control plane's paths.

/** The characters and ends; the length is checked apart: a bounded repeat ({0,251}) compiles to a regexp 250
 *  times larger, which V8 compiles again whenever it has dropped its code (measured: most of a one-policy edit's
 *  validation). */
const NAME_CHARS = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
export const MAX_NAME_LENGTH = 253;

export function isResourceName(name: string): boolean {
  return name.length <= MAX_NAME_LENGTH && NAME_CHARS.test(name);
}
