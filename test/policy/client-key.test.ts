// client key › tagSetKey, the stable text of a client's tag set: keys and each key's values sorted.
import test from "ava";
import { tagSetKey } from "../../extproc/policy/model/client.js";
import { tagSet } from "../../extproc/policy/selection/match.js";

test("client key › given multi-valued tags in any order, when keyed, then keys and values are sorted", (t) => {
  t.is(tagSetKey(tagSet({ zone: ["b", "a"], app: "web" })), "app=web&zone=a|b");
  t.is(tagSetKey(tagSet({ app: "web", zone: ["a", "b"] })), "app=web&zone=a|b");
});
