// The meshext release this build is: package.json's version, read once (dist/extproc/ sits two levels below it,
// in the repository and in the image alike).
import { readFileSync } from "node:fs";

export const MESHEXT_VERSION: string = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
