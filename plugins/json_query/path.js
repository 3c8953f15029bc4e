// A JSONPath subset for json_query: parses a path expression and selects the matching values of
// a document, each with its normalized location (`$.books[0].title`).
//
// Supported: `$` root; `.name` and `['name']`; `[2]` and `[-1]` indices; `.*` and `[*]`; `..name`
// and `..*` (recursive descent); `[0,2]` and `['a','b']` unions; `[1:3]` slices (step too); and
// filters `[?(@.price < 10)]`, `[?(@.tags)]` with `== != < <= > >=` against a JSON literal.

export class PathError extends Error {
  constructor(message) {
    super(message);
    this.name = "PathError";
  }
}

const NAME = /^[A-Za-z_$][A-Za-z0-9_$-]*/;
const COMPARISON = /^(==|!=|<=|>=|<|>)/;

/** Parses `query` into a list of steps; throws PathError naming the position on bad syntax. */
export function parse(query) {
  if (typeof query !== "string" || !query.startsWith("$")) {
    throw new PathError(`a query starts with $ (the document's root), e.g. $.items[0].name; got ${JSON.stringify(query)}`);
  }
  const steps = [];
  let i = 1;
  const fail = (what) => {
    throw new PathError(`${what} at position ${i} of ${JSON.stringify(query)}`);
  };
  while (i < query.length) {
    if (query.startsWith("..", i)) {
      i += 2;
      if (query[i] === "*") {
        i += 1;
        steps.push({ descend: true, select: { wildcard: true } });
      } else if (query[i] === "[") {
        const [select, next] = bracket(query, i, fail);
        i = next;
        steps.push({ descend: true, select });
      } else {
        const name = query.slice(i).match(NAME);
        if (!name) fail("expected a name after ..");
        i += name[0].length;
        steps.push({ descend: true, select: { names: [name[0]] } });
      }
    } else if (query[i] === ".") {
      i += 1;
      if (query[i] === "*") {
        i += 1;
        steps.push({ select: { wildcard: true } });
      } else {
        const name = query.slice(i).match(NAME);
        if (!name) fail("expected a name after .");
        i += name[0].length;
        steps.push({ select: { names: [name[0]] } });
      }
    } else if (query[i] === "[") {
      const [select, next] = bracket(query, i, fail);
      i = next;
      steps.push({ select });
    } else {
      fail(`unexpected ${JSON.stringify(query[i])}`);
    }
  }
  return steps;
}

/** Parses one `[...]` selector starting at `start`; returns it and the position after `]`. */
function bracket(query, start, fail) {
  const close = findClose(query, start);
  if (close < 0) fail("an unclosed [");
  const inner = query.slice(start + 1, close).trim();
  const next = close + 1;
  if (inner === "*") return [{ wildcard: true }, next];
  if (inner.startsWith("?")) return [{ filter: filter(inner.slice(1).trim(), fail) }, next];
  const slice = inner.match(/^(-?\d*):(-?\d*)(?::(-?\d+))?$/);
  if (slice) {
    const num = (s) => (s === "" || s === undefined ? undefined : Number(s));
    return [{ slice: [num(slice[1]), num(slice[2]), num(slice[3]) ?? 1] }, next];
  }
  const parts = inner.split(",").map((p) => p.trim());
  if (parts.every((p) => /^-?\d+$/.test(p))) return [{ indices: parts.map(Number) }, next];
  const names = parts.map((p) => {
    const quoted = p.match(/^'([^']*)'$|^"([^"]*)"$/);
    if (!quoted) fail(`expected an index, a 'name', *, a slice or a ?(filter) inside [${inner}]`);
    return quoted[1] ?? quoted[2];
  });
  return [{ names }, next];
}

function findClose(query, start) {
  let depth = 0;
  let quote = null;
  for (let j = start; j < query.length; j++) {
    const c = query[j];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "[") depth++;
    else if (c === "]" && --depth === 0) return j;
  }
  return -1;
}

/** `(@.a.b op literal)` or `(@.a)`: a field path relative to the candidate and a test. */
function filter(text, fail) {
  const body = text.replace(/^\(/, "").replace(/\)$/, "").trim();
  if (!body.startsWith("@")) fail("a filter looks like ?(@.field < 10) or ?(@.field)");
  const field = body.slice(1).match(/^(\.[A-Za-z_$][A-Za-z0-9_$-]*)*/)[0];
  const rest = body.slice(1 + field.length).trim();
  const path = field.split(".").filter(Boolean);
  if (rest === "") return { path, op: "exists" };
  const op = rest.match(COMPARISON);
  if (!op) fail(`unknown comparison in filter (${body}); use == != < <= > >=`);
  let literal;
  const raw = rest.slice(op[0].length).trim().replace(/^'([^']*)'$/, '"$1"');
  try {
    literal = JSON.parse(raw);
  } catch {
    fail(`the filter's value ${raw} is not a JSON literal (quote strings)`);
  }
  return { path, op: op[0], literal };
}

function children(value, location) {
  if (Array.isArray(value)) return value.map((v, i) => [v, `${location}[${i}]`]);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).map(([k, v]) => [v, childLocation(location, k)]);
  }
  return [];
}

function childLocation(location, key) {
  return NAME.test(key) && key.match(NAME)[0] === key ? `${location}.${key}` : `${location}[${JSON.stringify(key)}]`;
}

function passes(value, { path, op, literal }) {
  let field = value;
  for (const key of path) {
    if (field === null || typeof field !== "object" || !(key in field)) return false;
    field = field[key];
  }
  switch (op) {
    case "exists": return true;
    case "==": return JSON.stringify(field) === JSON.stringify(literal);
    case "!=": return JSON.stringify(field) !== JSON.stringify(literal);
    case "<": return typeof field === typeof literal && field < literal;
    case "<=": return typeof field === typeof literal && field <= literal;
    case ">": return typeof field === typeof literal && field > literal;
    case ">=": return typeof field === typeof literal && field >= literal;
  }
  return false;
}

function applySelect(value, location, select) {
  if (select.wildcard) return children(value, location);
  if (select.names) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
    return select.names.filter((n) => Object.hasOwn(value, n)).map((n) => [value[n], childLocation(location, n)]);
  }
  if (!Array.isArray(value)) {
    return select.filter ? children(value, location).filter(([v]) => passes(v, select.filter)) : [];
  }
  if (select.indices) {
    return select.indices
      .map((i) => (i < 0 ? value.length + i : i))
      .filter((i) => i >= 0 && i < value.length)
      .map((i) => [value[i], `${location}[${i}]`]);
  }
  if (select.slice) {
    const [from, to, step] = select.slice;
    if (step <= 0) return [];
    const norm = (n, fallback) => (n === undefined ? fallback : n < 0 ? Math.max(value.length + n, 0) : Math.min(n, value.length));
    const out = [];
    for (let i = norm(from, 0); i < norm(to, value.length); i += step) out.push([value[i], `${location}[${i}]`]);
    return out;
  }
  return children(value, location).filter(([v]) => passes(v, select.filter));
}

function descendants(value, location) {
  const out = [[value, location]];
  for (const [child, where] of children(value, location)) out.push(...descendants(child, where));
  return out;
}

/** Every value `query` selects in `document`, as `[value, location]` pairs in document order. */
export function select(document, query) {
  let current = [[document, "$"]];
  for (const step of parse(query)) {
    const candidates = step.descend ? current.flatMap(([v, l]) => descendants(v, l)) : current;
    current = candidates.flatMap(([v, l]) => applySelect(v, l, step.select));
  }
  return current;
}
