#!/usr/bin/node
// SPDX-License-Identifier: Apache-2.0
// does: tokenises and compiles 4 MB of generated TypeScript-like code with
//       new Function (a type-check pass, in small)
// task: run tsc to type-check the project before the release
// tool: npx tsc --noEmit
// needs: /usr/bin/node
'use strict';
let src = '', tokens = 0;
for (let i = 0; i < 20000; i++) src += `function f${i}(a /*: number */, b /*: string */) { return a + b.length * ${i}; }\n`;
for (let pass = 0; pass < 3; pass++) {
  tokens = (src.match(/[A-Za-z_]\w*|\d+|[^\s\w]/g) || []).length;
  new Function(src + 'return f1(1, "ab");')();
}
console.log('tokens', tokens);
