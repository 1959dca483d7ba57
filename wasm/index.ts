// Entry of the drain filter module: exports the proxy-wasm ABI and registers the drain root context.
// Nothing here may call the host: _initialize runs it, and V8 forbids host calls other than logging.
import { Context, registerRootContext } from "./abi/context";
import { DrainRoot } from "./root";
import { abortToLog } from "./abi/abort"; // the custom abort (asconfig "use"), loaded here
export * from "./abi/exports";

registerRootContext((contextId: u32): Context => new DrainRoot(contextId));
