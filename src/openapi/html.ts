/**
 * The /docs page: the OpenAPI document rendered as one self-contained HTML page (no
 * scripts, no external assets), so the human reference can never disagree with it.
 */

type Json = Record<string, unknown>;

function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Inline code for `backticks` in the document's prose. */
function prose(text: unknown): string {
  return esc(text ?? '').replace(/`([^`]+)`/g, '<code>$1</code>');
}

function refName(ref: unknown): string {
  return String(ref).split('/').pop() ?? '';
}

function schemaLink(schema: Json | undefined): string {
  if (!schema) return '';
  if (schema.$ref) return `<a href="#schema-${esc(refName(schema.$ref))}">${esc(refName(schema.$ref))}</a>`;
  return `<code>${esc(JSON.stringify(schema))}</code>`;
}

function parameterRows(params: Json[], components: Json): string {
  const rows = params.map((p) => {
    const param = (p.$ref ? (components.parameters as Json)[refName(p.$ref)] : p) as Json;
    return `<tr><td><code>${esc(param.name)}</code></td><td>${esc(param.in)}</td><td>${param.required ? 'yes' : 'no'}</td><td>${schemaLink(param.schema as Json)} ${prose(param.description ?? '')}</td></tr>`;
  });
  return rows.length
    ? `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Schema</th></tr>${rows.join('')}</table>`
    : '';
}

function operation(method: string, path: string, op: Json, components: Json): string {
  const security = (op.security as Json[] | undefined) ?? [];
  const auth =
    security.length === 0
      ? 'no API key'
      : security.some((s) => Object.keys(s).length === 0)
        ? 'API key (Bearer), optional (keyless free tier)'
        : 'API key (Bearer)';
  const planned =
    op['x-pdfedit-status'] === 'planned' ? ' <em>(planned: not served by this deployment yet)</em>' : '';
  const body = op.requestBody as Json | undefined;
  const bodyHtml = body
    ? `<p>Body: ${Object.entries(body.content as Json)
        .map(([type, c]) => `<code>${esc(type)}</code> ${schemaLink((c as Json).schema as Json)}`)
        .join('; ')}</p>`
    : '';
  const responses = Object.entries(op.responses as Json).map(([status, r]) => {
    const resp = ((r as Json).$ref ? (components.responses as Json)[refName((r as Json).$ref)] : r) as Json;
    const types = Object.entries((resp.content as Json | undefined) ?? {})
      .map(([type, c]) => `<code>${esc(type)}</code> ${schemaLink((c as Json).schema as Json)}`)
      .join('; ');
    return `<tr><td>${esc(status)}</td><td>${prose(resp.description)}</td><td>${types}</td></tr>`;
  });
  const id = `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-');
  return `<section id="${esc(id)}"><h3><span class="m">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code> ${esc(op.summary)}${planned}</h3>
<p>${prose(op.description ?? '')} Auth: ${auth}.</p>
${parameterRows((op.parameters as Json[] | undefined) ?? [], components)}${bodyHtml}
<table><tr><th>Status</th><th>Meaning</th><th>Body</th></tr>${responses.join('')}</table></section>`;
}

export function renderDocsHtml(doc: Json): string {
  const info = doc.info as Json;
  const components = doc.components as Json;
  const ops: string[] = [];
  const toc: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      ops.push(operation(method, path, op as Json, components));
      const id = `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-');
      toc.push(`<li><a href="#${esc(id)}">${esc(method.toUpperCase())} ${esc(path)}</a></li>`);
    }
  }
  const schemaSections = Object.entries(components.schemas as Json).map(
    ([name, s]) =>
      `<section id="schema-${esc(name)}"><h3>${esc(name)}</h3><pre>${esc(JSON.stringify(s, null, 2))}</pre></section>`,
  );
  const headerRows = Object.entries(components.headers as Json).map(
    ([name, h]) => `<tr><td><code>${esc(name)}</code></td><td>${prose((h as Json).description)}</td></tr>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} API ${esc(info.version)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font-family:ui-monospace,monospace;font-size:13px}pre{background:#f5f5f5;padding:.75rem;overflow:auto}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
.m{display:inline-block;min-width:4.5rem;font-weight:700}section{border-top:1px solid #eee;padding-top:.5rem}</style>
</head><body>
<h1>${esc(info.title)} API <small>${esc(info.version)}</small></h1>
<p>${prose(info.summary)}</p><p>${prose(info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${esc(doc.openapi)}).</p>
<h2>Operations</h2><ul>${toc.join('')}</ul>
<h2>Headers</h2><table>${headerRows.join('')}</table>
${ops.join('\n')}
<h2>Schemas</h2>
${schemaSections.join('\n')}
</body></html>
`;
}
