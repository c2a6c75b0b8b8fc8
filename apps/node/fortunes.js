// /fortunes' page: the rows read from the database plus the one added at
// request time, sorted by message and rendered as HTML. The app is node:http
// with no framework, so its template engine is the language's own: a tagged
// template literal whose tag HTML-escapes every interpolated value (the five
// characters & < > " ' that can break out of text or an attribute), so the
// <script> row never comes back as markup.
'use strict';

const ADDED_MESSAGE = 'Additional fortune added at request time.';
const HEAD = '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>';
const FOOT = '</table></body></html>';

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (value) => String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);

// The tag: literal parts pass through, every value is escaped.
function html(strings, ...values) {
  return strings.reduce((out, literal, i) => out + escapeHtml(values[i - 1]) + literal);
}

// Sorted by message in code-point order, the contract's: the UTF-8 bytes
// compare that way, where JavaScript's own `<` compares UTF-16 code units.
function renderFortunes(rows) {
  const fortunes = [...rows, { id: 0, message: ADDED_MESSAGE }].map((f) => ({ ...f, key: Buffer.from(f.message) }));
  fortunes.sort((a, b) => Buffer.compare(a.key, b.key));
  return HEAD + fortunes.map((f) => html`<tr><td>${f.id}</td><td>${f.message}</td></tr>`).join('') + FOOT;
}

module.exports = { renderFortunes };
