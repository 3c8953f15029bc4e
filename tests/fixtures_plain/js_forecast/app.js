// Test fixture: a plain component in JavaScript (componentize-js, no cordon SDK) that reads its
// configuration through wasi:config/store, the way Wassette's get-weather-js reads its API key.

import { get, getAll } from "wasi:config/store@0.2.0-draft";

export function forecast(city) {
  const unit = get("unit") ?? "unset";
  return `${city}: sunny, 21 degrees (${unit})`;
}

export function settings() {
  return getAll()
    .map(([key, value]) => `${key}=${value}`)
    .sort()
    .join("\n");
}
