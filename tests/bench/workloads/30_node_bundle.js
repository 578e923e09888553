#!/usr/bin/node
// SPDX-License-Identifier: Apache-2.0
// does: generates 600 JS modules, compiles each with vm.Script, bundles and
//       minifies them into /tmp/bundle.js (what a webpack build does, in small)
// task: run the webpack production build of the frontend
// tool: npm run build
// needs: /usr/bin/node
'use strict';
const vm = require('vm'), fs = require('fs'), crypto = require('crypto');
const mods = [];
for (let i = 0; i < 600; i++) {
  let src = `module.exports = function m${i}(a) {\n  // module ${i}\n  let s = 0;\n`;
  for (let k = 0; k < 40; k++) src += `  if (a > ${k}) { s += a * ${k} + ${i}; } else { s -= ${k}; }\n`;
  mods.push(src + '  return s;\n};\n');
}
const parts = mods.map((src, i) => {
  new vm.Script(`(function (module) {${src}})`, { filename: `m${i}.js` });
  return `/*${i}*/function(module){${src.replace(/\/\/.*\n/g, '').replace(/\s+/g, ' ')}}`;
});
const bundle = `(function(){var m=[${parts.join(',\n')}];})();`;
fs.writeFileSync('/tmp/bundle.js', bundle);
console.log('bundle', bundle.length, crypto.createHash('sha256').update(bundle).digest('hex').slice(0, 12));
