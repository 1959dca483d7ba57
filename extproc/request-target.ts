// The URL of an incoming HTTP request's target, read as a path: it never throws, whatever the client sent.

/**
 * `target` (req.url) as a URL on `base`. An origin-form target is a path, so `//x` is the path `//x`, not a URL naming
 * the host `x` (which `new URL("//", base)` refuses with a TypeError). Undefined when no URL can hold the target: the
 * caller answers 400 instead of letting one request's TypeError end the process.
 */
export function requestUrl(target: string | undefined, base: string): URL | undefined {
  const text = target ?? "/";
  try {
    return text.startsWith("/") ? new URL(`${base}${text}`) : new URL(text, base);
  } catch {
    return undefined;
  }
}

/** The reason a 400 gives for a target requestUrl could not read. */
export const BAD_TARGET_MESSAGE = "the request target is not a path or a URL";
