// A plain (non-cordon) JavaScript component for the `async-greet` world, built with
// componentize-qjs 0.4.5 and its default runtime (component-model async ABI; no `--sync`).
// WIT `async func` exports are `export async function`s (camelCase names); a top-level
// `result<T, E>` is "return T or throw E"; record fields arrive camelCase.

export async function greet(name) {
  return `Hello, ${name}!`;
}

export async function greetWith(req) {
  const name = req.name.trim();
  if (name.length === 0) {
    throw "name must not be empty";
  }
  const count = [...name].length;
  if (count > 64) {
    throw `name too long: ${count} chars (max 64)`;
  }
  const salutation = req.salutation.trim() || "Hello";
  // Suspend once on a microtask before answering.
  await Promise.resolve();
  const text = `${salutation}, ${name}!`;
  return req.shout ? text.toUpperCase() : text;
}
