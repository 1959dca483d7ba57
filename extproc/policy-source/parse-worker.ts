// Worker thread for large directory loads: reads and parses the changed files off the main thread and posts
// back only what is held. Its heap (every file's text and YAML tree) goes away with it, so the sidecar's
// memory after a load grows with what selects it, not with the mesh. Started by parse-in-worker.ts.
import { parentPort, workerData } from "node:worker_threads";
import { detachNothing } from "../policy/documents/compact.js";
import { type FileJob, readPolicyFiles } from "./policy-file.js";

detachNothing(); // what is posted back is copied anyway

parentPort!.postMessage(await readPolicyFiles(workerData as FileJob[], async () => {}));
