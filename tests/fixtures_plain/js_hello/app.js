// Test fixture: a command-line program in JavaScript built with componentize-js and no cordon SDK
// (a `wasi:cli` command): it greets the names in its arguments on stdout, and with none says so
// on stderr and exits with status 1.

import { getArguments } from "wasi:cli/environment@0.2.12";
import { exit } from "wasi:cli/exit@0.2.12";

export const run = {
  run() {
    const names = getArguments().slice(1);
    if (names.length === 0) {
      console.error("hello: no one to greet; pass names as arguments");
      exit({ tag: "err" });
    }
    for (const name of names) {
      console.log(`Hello, ${name}!`);
    }
  },
};
