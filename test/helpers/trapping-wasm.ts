// A tiny proxy-wasm 0.2.1 module, hand-assembled, that Envoy loads and that traps (`unreachable`) in one HTTP
// callback: a VM failing at run time, for testing the wasm filter's failure_policy in a real Envoy.
import { funcType, MAGIC_AND_VERSION, name, section, uleb, vec } from "./wasm-assemble.js";

export type TrapIn = "request_headers" | "response_headers";

const I32_CONST_1 = [0x41, 0x01];
const I32_CONST_0 = [0x41, 0x00];
const UNREACHABLE = [0x00];

/** The module's bytes: every callback succeeds except on_<trapIn>, which traps. */
export function trappingModule(trapIn: TrapIn): Uint8Array {
  const types = [funcType(0, 0), funcType(1, 1), funcType(2, 0), funcType(2, 1), funcType(3, 1), funcType(1, 0)];
  const [VOID, I_I, II_V, II_I, III_I, I_V] = [0, 1, 2, 3, 4, 5];
  const functions: Array<{ exportName: string; type: number; body: number[] }> = [
    { exportName: "proxy_abi_version_0_2_1", type: VOID, body: [] },
    { exportName: "proxy_on_memory_allocate", type: I_I, body: [0x41, ...uleb(1024)] },
    { exportName: "proxy_on_context_create", type: II_V, body: [] },
    { exportName: "proxy_on_vm_start", type: II_I, body: I32_CONST_1 },
    { exportName: "proxy_on_configure", type: II_I, body: I32_CONST_1 },
    { exportName: "proxy_on_request_headers", type: III_I, body: trapIn === "request_headers" ? UNREACHABLE : I32_CONST_0 },
    { exportName: "proxy_on_response_headers", type: III_I, body: trapIn === "response_headers" ? UNREACHABLE : I32_CONST_0 },
    { exportName: "proxy_on_done", type: I_I, body: I32_CONST_1 },
    { exportName: "proxy_on_log", type: I_V, body: [] },
    { exportName: "proxy_on_delete", type: I_V, body: [] },
  ];
  const code = functions.map((f) => {
    const body = [0x00, ...f.body, 0x0b]; // no locals, instructions, end
    return [...uleb(body.length), ...body];
  });
  return Uint8Array.from([
    ...MAGIC_AND_VERSION,
    ...section(1, vec(types)),
    ...section(3, vec(functions.map((f) => uleb(f.type)))),
    ...section(5, vec([[0x00, 0x01]])),
    ...section(7, vec([...functions.map((f, i) => [...name(f.exportName), 0x00, ...uleb(i)]), [...name("memory"), 0x02, 0x00]])),
    ...section(10, vec(code)),
  ]);
}
