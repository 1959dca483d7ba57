// A bounded CPU burner: keeps `--share` of one core busy (busy/idle slices of 10 ms) until its parent goes away or
// `--max-s` passes, then exits. Used by scripts/suite-under-load.mjs to load every core while the suite runs.
// Usage: node scripts/cpu-burner.mjs [--share 0.5] [--max-s 3600]
const SLICE_MS = 10;

function flag(name, fallback) {
  const at = process.argv.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isFinite(value)) {
    process.stderr.write(`cpu-burner: ${name} needs a number, got ${process.argv[at + 1] ?? "nothing"}\n`);
    process.exit(2);
  }
  return value;
}

const share = flag("--share", 0.5);
const maxS = flag("--max-s", 3600);
if (share <= 0 || share > 1) {
  process.stderr.write(`cpu-burner: --share must be in (0, 1], got ${share}\n`);
  process.exit(2);
}
const busyMs = SLICE_MS * share;
const idleMs = SLICE_MS - busyMs;
const endAt = Date.now() + maxS * 1000;
const parentPid = process.ppid;

function parentGone() {
  try {
    process.kill(parentPid, 0);
    return false;
  } catch {
    return true;
  }
}

let slices = 0;
function slice() {
  const until = performance.now() + busyMs;
  let spin = 0;
  while (performance.now() < until) spin += Math.sqrt(spin + 1);
  slices += 1;
  // the parent is checked every 100 slices (about a second), the deadline on every slice
  if (Date.now() >= endAt || (slices % 100 === 0 && parentGone())) process.exit(0);
  setTimeout(slice, idleMs);
}
process.on("SIGTERM", () => process.exit(0));
slice();
