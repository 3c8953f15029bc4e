// Tests of the JSONPath subset in plain Node: `node --test plugins/json_query/test_path.js`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PathError, select } from "./path.js";

const doc = {
  store: { name: "shop", "odd key": 1 },
  items: [
    { name: "a", price: 5, tags: ["x"] },
    { name: "b", price: 15 },
    { name: "c", price: 10, tags: ["y", "z"] },
  ],
};

const locations = (query) => select(doc, query).map(([, location]) => location);
const values = (query) => select(doc, query).map(([value]) => value);

test("names, indices and the root", () => {
  assert.deepEqual(values("$"), [doc]);
  assert.deepEqual(values("$.store.name"), ["shop"]);
  assert.deepEqual(values("$['store']['odd key']"), [1]);
  assert.deepEqual(locations("$.store['odd key']"), ['$.store["odd key"]']);
  assert.deepEqual(values("$.items[-1].name"), ["c"]);
  assert.deepEqual(values("$.items[7]"), []);
  assert.deepEqual(values("$.missing.deeper"), []);
});

test("wildcards, unions, slices and recursive descent", () => {
  assert.deepEqual(values("$.items[*].name"), ["a", "b", "c"]);
  assert.deepEqual(values("$.items[0,2].name"), ["a", "c"]);
  assert.deepEqual(values("$.items[1:].name"), ["b", "c"]);
  assert.deepEqual(values("$.items[::2].name"), ["a", "c"]);
  assert.deepEqual(values("$..tags[*]"), ["x", "y", "z"]);
  assert.deepEqual(locations("$..price"), ["$.items[0].price", "$.items[1].price", "$.items[2].price"]);
});

test("filters", () => {
  assert.deepEqual(values("$.items[?(@.price >= 10)].name"), ["b", "c"]);
  assert.deepEqual(values("$.items[?(@.name == 'b')].price"), [15]);
  assert.deepEqual(values("$.items[?(@.tags)].name"), ["a", "c"]);
  assert.deepEqual(values('$.items[?(@.price < "10")]'), [], "no comparing numbers with strings");
});

test("bad queries name the problem", () => {
  assert.throws(() => select(doc, "items"), PathError);
  assert.throws(() => select(doc, "$.items["), /unclosed \[ at position 7/);
  assert.throws(() => select(doc, "$.items[?(@.price ~ 1)]"), /unknown comparison/);
  assert.throws(() => select(doc, "$.items[?(@.name == b)]"), /not a JSON literal/);
  assert.throws(() => select(doc, "$.items[foo]"), /expected an index/);
});
