// Metrics of the policy-directory source (--policies DIR), the counterparts of the control-plane source's
// meshext_control_plane_rejected_policies*: registered on the registry it is given (never the global one).
import { Counter, Gauge, type Registry } from "prom-client";

export class DirSourceMetrics {
  readonly rejected: Gauge;
  readonly rejectedTotal: Counter;
  readonly filesRead: Counter;
  readonly documentsParsed: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.rejected = new Gauge({ name: "meshext_policy_dir_rejected_policies", help: "Documents in the --policies directory, as last scanned, that failed validation and are not applied.", registers });
    this.rejectedTotal = new Counter({ name: "meshext_policy_dir_rejected_policies_total", help: "Documents of the --policies directory rejected by validation, counted each time a changed file is read.", registers });
    this.filesRead = new Counter({ name: "meshext_policy_dir_files_read_total", help: "Files of the --policies directory read by a scan (a scan reads only files whose inode, size or times changed, or that were written just before their last read).", registers });
    this.documentsParsed = new Counter({ name: "meshext_policy_dir_documents_parsed_total", help: "Documents of the --policies directory parsed and validated (a changed file's unchanged documents are not parsed again).", registers });
  }
}
