// Sessions and what they carry: the gateways (or CLI commands) the daemon has
// seen, the session grants an allow "for this session" leaves behind (R-D-8),
// a gateway's report of policy keys its upstream does not list, and the tool
// names each live gateway lists to its client (how a hook tells the gateway's
// own tools from any other MCP tool, R-HOOK-13).
import type { Clock } from '../core/base/clock.js';

export interface SessionInfo {
  sessionId: string;
  caller: Record<string, unknown>;
  firstSeen: number;
  lastSeen: number;
  calls: number;
  ended: boolean;
}

/** A `policy.tools` key that names a tool its upstream does not list, as a gateway reported it. */
export interface UnlistedPolicyToolReport {
  key: string;
  server: string;
  listed: string[];
}

export class Sessions {
  private readonly sessions = new Map<string, SessionInfo>();
  /** Per session: `server/tool` → the approval whose allow (scope session) granted it. */
  private readonly grants = new Map<string, Map<string, string>>();
  /** Per session: `policy.tools` keys its gateway found no upstream tool for (shown by daemon.status). */
  private readonly unlistedTools = new Map<string, { token: object; entries: UnlistedPolicyToolReport[] }>();
  /** Per live gateway session: the tool names it lists to its MCP client, as that client names them. */
  private readonly gatewayTools = new Map<string, { token: object; tools: ReadonlySet<string> }>();

  constructor(private readonly clock: Clock) {}

  /** A call arrived in this session: it is known from now on and counted. */
  touch(sessionId: string, caller: Record<string, unknown>): SessionInfo {
    const now = this.clock.now();
    let session = this.sessions.get(sessionId);
    if (session === undefined) {
      session = { sessionId, caller, firstSeen: now, lastSeen: now, calls: 0, ended: false };
      this.sessions.set(sessionId, session);
    }
    session.lastSeen = now;
    session.calls += 1;
    return session;
  }

  /** Sessions that have not ended. */
  list(): SessionInfo[] {
    return [...this.sessions.values()].filter((s) => !s.ended);
  }

  /** The session ended: its grants and its report are forgotten. */
  end(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (session !== undefined) session.ended = true;
    this.grants.delete(sessionId);
    this.unlistedTools.delete(sessionId);
    this.gatewayTools.delete(sessionId);
  }

  /** Remembers an allow for the same session and tool for the rest of the session (R-D-8). */
  grant(sessionId: string, toolKey: string, approvalId: string): void {
    let grants = this.grants.get(sessionId);
    if (grants === undefined) this.grants.set(sessionId, (grants = new Map()));
    grants.set(toolKey, approvalId);
  }

  /** The approval that granted this tool to the session, if one did. */
  grantedBy(sessionId: string, toolKey: string): string | undefined {
    return this.grants.get(sessionId)?.get(toolKey);
  }

  /**
   * A gateway's report of `policy.tools` keys that name no tool of their upstream
   * (a typo never decides anything, so the operator should see it). Replaces the
   * session's earlier report; the returned function withdraws this report (when
   * the gateway's connection closes) unless a newer one replaced it.
   */
  reportUnlistedPolicyTools(sessionId: string, entries: UnlistedPolicyToolReport[]): () => void {
    const token = {};
    if (entries.length === 0) this.unlistedTools.delete(sessionId);
    else this.unlistedTools.set(sessionId, { token, entries });
    return () => {
      if (this.unlistedTools.get(sessionId)?.token === token) this.unlistedTools.delete(sessionId);
    };
  }

  /** Every reported key once, with what its server lists and how many gateways reported it. */
  unlistedPolicyTools(): (UnlistedPolicyToolReport & { sessions: number })[] {
    const byKey = new Map<string, UnlistedPolicyToolReport & { sessions: number }>();
    for (const { entries } of this.unlistedTools.values()) {
      for (const entry of entries) {
        const seen = byKey.get(entry.key);
        if (seen === undefined) byKey.set(entry.key, { ...entry, sessions: 1 });
        else seen.sessions += 1;
      }
    }
    return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * A gateway's report of the tool names it lists to its client (R-HOOK-13).
   * Replaces the session's earlier report; the returned function withdraws it
   * (when the gateway's connection closes) unless a newer one replaced it.
   */
  reportGatewayTools(sessionId: string, tools: readonly string[]): () => void {
    const token = {};
    if (tools.length === 0) this.gatewayTools.delete(sessionId);
    else this.gatewayTools.set(sessionId, { token, tools: new Set(tools) });
    return () => {
      if (this.gatewayTools.get(sessionId)?.token === token) this.gatewayTools.delete(sessionId);
    };
  }

  /** Whether a live gateway session lists this tool name to its client. */
  gatewayListsTool(tool: string): boolean {
    for (const { tools } of this.gatewayTools.values()) if (tools.has(tool)) return true;
    return false;
  }

  /** How many live gateway sessions reported their tools. */
  get gatewaySessions(): number {
    return this.gatewayTools.size;
  }
}
