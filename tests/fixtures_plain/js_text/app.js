// Test fixture: a component written in JavaScript for a WIT world of its own (wit/world.wit),
// built with componentize-js and no cordon SDK: a record with an option and a char, an enum, a
// result, an exception that is a trap, and a file read through the directories granted to it
// (`wasi:filesystem` imported by the world itself).

import { getDirectories } from "wasi:filesystem/preopens@0.2.12";

export function slugify(text, options) {
  let words = text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word.length > 0);
  if (options.maxWords !== undefined && options.maxWords !== null) {
    words = words.slice(0, options.maxWords);
  }
  return words.join(options.separator);
}

export function recase(text, to) {
  switch (to) {
    case "lower":
      return text.toLowerCase();
    case "upper":
      return text.toUpperCase();
    default:
      return text.replace(/\w\S*/g, (word) => word[0].toUpperCase() + word.slice(1).toLowerCase());
  }
}

export function parseCount(text) {
  if (!/^-?\d+$/.test(text.trim())) {
    throw `not a whole number: ${JSON.stringify(text)}`;
  }
  return Number.parseInt(text, 10);
}

export function failHard() {
  null.boom();
}

export function readNote(path) {
  const grants = getDirectories();
  const match = grants.find(([, guest]) => path.startsWith(guest.endsWith("/") ? guest : `${guest}/`));
  if (!match) {
    throw `cannot read ${path}: it is under none of the granted directories (${grants.map(([, g]) => g).join(", ") || "none"})`;
  }
  const [dir, guest] = match;
  const rest = path.slice(guest.length).replace(/^\/+/, "");
  let file;
  try {
    file = dir.openAt({}, rest, {}, { read: true });
  } catch (error) {
    throw `cannot read ${path}: ${error?.payload ?? error}`;
  }
  const [bytes] = file.read(1n << 20n, 0n);
  return new TextDecoder().decode(bytes);
}
