// Renders a generated config object as YAML text: the comments attached with commented(), multi-line strings as
// literal blocks, and small collections without comments on one line in flow style.
import { Document, isMap, isPair, isScalar, isSeq, Scalar, YAMLMap, YAMLSeq, type Node } from "yaml";
import { commentsOf } from "./commented.js";

/** Collections whose one-line form is at most this long (in JSON characters) are written inline. */
const FLOW_MAX_CHARS = 96;

function applyComments(node: unknown, value: unknown): boolean {
  let hasComment = false;
  const comments = commentsOf(value);
  if (isMap(node) && value && typeof value === "object") {
    for (const pair of (node as YAMLMap).items) {
      if (!isPair(pair) || !isScalar(pair.key)) continue;
      const key = String(pair.key.value);
      const child = (value as Record<string, unknown>)[key];
      if (applyComments(pair.value, child)) hasComment = true;
      const text = comments?.[key];
      if (text) {
        (pair.key as Scalar).commentBefore = text.split("\n").map((l) => ` ${l}`).join("\n");
        hasComment = true;
      }
    }
  } else if (isSeq(node) && Array.isArray(value)) {
    (node as YAMLSeq).items.forEach((item, i) => {
      if (applyComments(item, value[i])) hasComment = true;
    });
  } else if (isScalar(node) && typeof node.value === "string" && node.value.includes("\n")) {
    node.type = Scalar.BLOCK_LITERAL;
    hasComment = true; // a block scalar cannot sit inside a flow collection
  }
  const self = comments?.["."];
  if (self && node && typeof node === "object") {
    (node as Node).commentBefore = self.split("\n").map((l) => ` ${l}`).join("\n");
    hasComment = true;
  }
  if ((isMap(node) || isSeq(node)) && !hasComment && JSON.stringify(value).length <= FLOW_MAX_CHARS) (node as YAMLMap | YAMLSeq).flow = true;
  return hasComment;
}

/** YAML text of `value`, with `header` (lines) as the file's opening comment. */
export function toCommentedYaml(value: object, header: string): string {
  const doc = new Document(value);
  applyComments(doc.contents, value);
  doc.commentBefore = header.split("\n").map((l) => ` ${l}`).join("\n");
  return doc.toString({ lineWidth: 0, flowCollectionPadding: true });
}
