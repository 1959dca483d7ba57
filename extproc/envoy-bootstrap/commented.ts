// Comments that travel with a generated config object to its YAML: builders attach them to the object they
// describe (per field, or "." for the object itself), and yaml-text.ts writes them above the lines they explain.

export const COMMENTS = Symbol("comments");

export type Commented<T extends object> = T & { [COMMENTS]?: Record<string, string> };

/** `value` with comments for its fields (key "." comments the object itself, e.g. a list item). */
export function commented<T extends object>(value: T, comments: Record<string, string>): Commented<T> {
  const own = (value as Commented<T>)[COMMENTS];
  Object.defineProperty(value, COMMENTS, { value: { ...own, ...comments }, enumerable: false, configurable: true });
  return value as Commented<T>;
}

export function commentsOf(value: unknown): Record<string, string> | undefined {
  return value !== null && typeof value === "object" ? (value as Commented<object>)[COMMENTS] : undefined;
}
