// The two kinds of action an agent can propose (SPEC §1).

/** A process to execute: absolute executable, argv array, absolute cwd, env object. */
export interface ExecAction {
  executable: string;
  cwd: string;
  args: string[];
  env: Record<string, string>;
}

/** An MCP tool call: server alias, tool name, arguments. */
export interface ToolAction {
  kind: 'tool';
  server: string;
  tool: string;
  args: Record<string, unknown>;
}

/** `<server alias>/<tool name>` (R-POL-1). */
export function toolId(server: string, tool: string): string {
  return `${server}/${tool}`;
}
