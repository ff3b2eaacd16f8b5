import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { expect } from 'vitest';

export const TOOLS = ['pdf_batch', 'pdf_edit', 'pdf_find', 'pdf_job', 'pdf_preview'];

export type ToolResult = CallToolResult & { structuredContent?: Record<string, unknown> };

/** tools/call; the SDK Client checks structuredContent against the tool's outputSchema. */
export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

/** The error a tool answered: its code, message and hint (from `_meta` and the text). */
export function toolErrorOf(res: ToolResult): { code: string; message: string; hint: string } {
  expect(res.isError, JSON.stringify(res.content)).toBe(true);
  const error = (res._meta as Record<string, { code: string; message: string; hint: string }> | undefined)?.[
    'pdfedit/error'
  ];
  expect(error).toBeDefined();
  const text = (res.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');
  expect(text).toContain(error!.code);
  expect(text).toContain(error!.hint);
  return error!;
}

/**
 * Lists the tools and checks each: every input and output schema compiles as JSON Schema,
 * every input member is described, and the annotations say what each tool does.
 */
export async function checkToolList(client: Client, local: boolean) {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
  const ajv = new AjvJsonSchemaValidator();
  for (const tool of tools) {
    expect(tool.description?.length, tool.name).toBeGreaterThan(80);
    expect(tool.description, tool.name).toMatch(/Example: \{/);
    expect(tool.inputSchema.type).toBe('object');
    expect(tool.outputSchema?.type, tool.name).toBe('object');
    const validateInput = ajv.getValidator(tool.inputSchema as never);
    ajv.getValidator(tool.outputSchema as never);
    // The example in the description is itself valid input.
    const text = tool.description!;
    const example = JSON.parse(text.slice(text.indexOf('Example: ') + 9, text.lastIndexOf('}') + 1));
    expect(validateInput(example), `${tool.name} example`).toMatchObject({ valid: true });
    expect(validateInput({ ...example, no_such_member: 1 }).valid, `${tool.name} strict`).toBe(false);
    for (const [member, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
      expect((schema as { description?: string }).description, `${tool.name}.${member}`).toBeTruthy();
    }
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  expect(byName.pdf_find!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  expect(byName.pdf_preview!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  expect(byName.pdf_job!.annotations).toMatchObject({ readOnlyHint: true });
  expect(byName.pdf_edit!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
  expect(byName.pdf_batch!.annotations?.readOnlyHint).toBe(false);
  // Local files only over stdio.
  const docProps = (byName.pdf_edit!.inputSchema.properties as Record<string, { properties: object }>)
    .document!.properties;
  expect('path' in docProps).toBe(local);
  expect('output_path' in (byName.pdf_edit!.inputSchema.properties ?? {})).toBe(local);
  // The edit list is spelled out: ops and match modes as enums.
  const edit = JSON.stringify(byName.pdf_edit!.inputSchema);
  for (const word of ['replace', 'delete', 'redact', 'insert', 'form', 'icase', 'regex', 'span_ids']) {
    expect(edit).toContain(`"${word}"`);
  }
  return tools;
}

/** The members of a change that carry its verdict. */
export function verdicts(changes: Record<string, unknown>[]) {
  return changes.map((c) => ({
    page: c.page,
    op: c.op,
    find: c.find,
    replace: c.replace,
    verified: c.verified,
    font_source: c.font_source,
    font_used: c.font_used,
    collateral_pixels: c.collateral_pixels,
  }));
}
