#!/usr/bin/node
// SPDX-License-Identifier: Apache-2.0
// does: builds a 40 MB JSON document, parses it and aggregates it in node
// task: write a node script that merges the product feeds (JSON) and counts SKUs per brand
// tool: node merge_feeds.js feeds/*.json
// lang: javascript
// needs: /usr/bin/node
'use strict';
const items = [];
for (let i = 0; i < 300000; i++)
  items.push({ sku: 'sku' + i, brand: 'b' + (i % 313), price: (i * 7) % 1000 / 10, tags: ['x' + (i % 9), 'y' + (i % 5)] });
const text = JSON.stringify({ feed: items });
const per = new Map();
for (const it of JSON.parse(text).feed) per.set(it.brand, (per.get(it.brand) || 0) + 1);
console.log('bytes', text.length, 'brands', per.size);
