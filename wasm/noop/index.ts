// Baseline for the benchmark: the same ABI layer and build flags as the drain filter, passing
// every callback through (the default RootContext/HttpContext behaviour).
import { abortToLog } from "../abi/abort"; // the custom abort (asconfig "use"), loaded here
export * from "../abi/exports";
