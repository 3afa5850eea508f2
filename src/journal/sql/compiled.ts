// Written by scripts/writeQueries.mjs (`npm run queries`) from sql/queries.ts; do not edit.
// Each query and table of the store written once with kysely, compiled for each
// engine ahead of time so that nothing at run time loads kysely or compiles.
import type { Engine, Prepared } from './prepared.js';

type Compiled<K extends string> = Record<Engine, Record<K, Prepared>>;

export const COMPILED: {
  proofs: Compiled<'insertProof' | 'proofByHash' | 'lockProofByHash' | 'proofById' | 'proofByApproval' | 'proofsForAction' | 'listProofs' | 'hostRevision' | 'markConsumed' | 'insertEffect' | 'effectById' | 'effectByProof' | 'finishEffect' | 'markUncertain' | 'revoke'>;
  tokenRules: Compiled<'insertToken' | 'tokenByHash' | 'tokenById' | 'listTokens' | 'revokeToken' | 'insertRule' | 'ruleById' | 'listAllRules' | 'listActiveRules' | 'revokeRule'>;
  approvals: Compiled<'insertApproval' | 'approvalById' | 'lockApprovalById' | 'listApprovals' | 'listApprovalsByState' | 'resolveApproval' | 'insertVote' | 'votesOf' | 'votesOfPending'>;
  eventsCalls: Compiled<'appendEvent' | 'eventsSince' | 'recordCall' | 'endCall' | 'listCalls' | 'exportCursor' | 'advanceExportCursor' | 'readMeta' | 'writeMeta' | 'announceHost' | 'listHosts'>;
  proofTables: Record<Engine, { tables: string[]; indexes: string[] }>;
} = {
  "proofs": {
    "sqlite": {
      "insertProof": {"sql":"insert into \"proofs\" (\"id\", \"hash\", \"approval_id\", \"principal\", \"session_id\", \"action_kind\", \"action_digest\", \"revision\", \"decision\", \"channel\", \"audience\", \"issued_at\", \"expires_at\", \"state\", \"host_id\") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)","slots":[{"name":"id"},{"name":"hash"},{"name":"approval_id"},{"name":"principal"},{"name":"session_id"},{"name":"action_kind"},{"name":"action_digest"},{"name":"revision"},{"value":"allow"},{"name":"channel"},{"name":"audience"},{"name":"issued_at"},{"name":"expires_at"},{"value":"issued"},{"name":"host_id"}]},
      "proofByHash": {"sql":"select * from \"proofs\" where \"hash\" = ?","slots":[{"name":"hash"}]},
      "lockProofByHash": {"sql":"select * from \"proofs\" where \"hash\" = ?","slots":[{"name":"hash"}]},
      "proofById": {"sql":"select * from \"proofs\" where \"id\" = ?","slots":[{"name":"id"}]},
      "proofByApproval": {"sql":"select * from \"proofs\" where \"approval_id\" = ?","slots":[{"name":"approval_id"}]},
      "proofsForAction": {"sql":"select * from \"proofs\" where \"principal\" = ? and \"audience\" = ? and \"action_digest\" = ? order by \"issued_at\" desc, \"id\"","slots":[{"name":"principal"},{"name":"audience"},{"name":"action_digest"}]},
      "listProofs": {"sql":"select * from \"proofs\" order by \"issued_at\" desc, \"id\" limit ?","slots":[{"name":"limit"}]},
      "hostRevision": {"sql":"select \"revision\" from \"hosts\" where \"host_id\" = ?","slots":[{"name":"host_id"}]},
      "markConsumed": {"sql":"update \"proofs\" set \"state\" = ?, \"consumed_at\" = ?, \"effect_id\" = ? where \"hash\" = ? and \"state\" = ?","slots":[{"value":"consumed"},{"name":"now"},{"name":"effect_id"},{"name":"hash"},{"value":"issued"}]},
      "insertEffect": {"sql":"insert into \"effects\" (\"id\", \"host_id\", \"proof_hash\", \"proof_id\", \"approval_id\", \"action_digest\", \"state\", \"started_at\") values (?, ?, ?, ?, ?, ?, ?, ?)","slots":[{"name":"id"},{"name":"host_id"},{"name":"proof_hash"},{"name":"proof_id"},{"name":"approval_id"},{"name":"action_digest"},{"value":"intent"},{"name":"started_at"}]},
      "effectById": {"sql":"select * from \"effects\" where \"id\" = ?","slots":[{"name":"id"}]},
      "effectByProof": {"sql":"select * from \"effects\" where \"proof_hash\" = ?","slots":[{"name":"hash"}]},
      "finishEffect": {"sql":"update \"effects\" set \"state\" = ?, \"finished_at\" = ?, \"result_digest\" = ?, \"result\" = ? where \"id\" = ? and \"state\" = ?","slots":[{"name":"state"},{"name":"at"},{"name":"result_digest"},{"name":"result"},{"name":"id"},{"value":"intent"}]},
      "markUncertain": {"sql":"update \"effects\" set \"state\" = ?, \"finished_at\" = ? where (\"host_id\" = ? or \"host_id\" is null) and \"state\" = ? returning *","slots":[{"value":"uncertain"},{"name":"at"},{"name":"host_id"},{"value":"intent"}]},
      "revoke": {"sql":"update \"proofs\" set \"state\" = ?, \"revoked_at\" = ? where \"id\" = ? and \"state\" = ?","slots":[{"value":"revoked"},{"name":"at"},{"name":"id"},{"value":"issued"}]},
    },
    "postgres": {
      "insertProof": {"sql":"insert into \"proofs\" (\"id\", \"hash\", \"approval_id\", \"principal\", \"session_id\", \"action_kind\", \"action_digest\", \"revision\", \"decision\", \"channel\", \"audience\", \"issued_at\", \"expires_at\", \"state\", \"host_id\") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)","slots":[{"name":"id"},{"name":"hash"},{"name":"approval_id"},{"name":"principal"},{"name":"session_id"},{"name":"action_kind"},{"name":"action_digest"},{"name":"revision"},{"value":"allow"},{"name":"channel"},{"name":"audience"},{"name":"issued_at"},{"name":"expires_at"},{"value":"issued"},{"name":"host_id"}]},
      "proofByHash": {"sql":"select * from \"proofs\" where \"hash\" = $1","slots":[{"name":"hash"}]},
      "lockProofByHash": {"sql":"select * from \"proofs\" where \"hash\" = $1 for update","slots":[{"name":"hash"}]},
      "proofById": {"sql":"select * from \"proofs\" where \"id\" = $1","slots":[{"name":"id"}]},
      "proofByApproval": {"sql":"select * from \"proofs\" where \"approval_id\" = $1","slots":[{"name":"approval_id"}]},
      "proofsForAction": {"sql":"select * from \"proofs\" where \"principal\" = $1 and \"audience\" = $2 and \"action_digest\" = $3 order by \"issued_at\" desc, \"id\"","slots":[{"name":"principal"},{"name":"audience"},{"name":"action_digest"}]},
      "listProofs": {"sql":"select * from \"proofs\" order by \"issued_at\" desc, \"id\" limit $1","slots":[{"name":"limit"}]},
      "hostRevision": {"sql":"select \"revision\" from \"hosts\" where \"host_id\" = $1","slots":[{"name":"host_id"}]},
      "markConsumed": {"sql":"update \"proofs\" set \"state\" = $1, \"consumed_at\" = $2, \"effect_id\" = $3 where \"hash\" = $4 and \"state\" = $5","slots":[{"value":"consumed"},{"name":"now"},{"name":"effect_id"},{"name":"hash"},{"value":"issued"}]},
      "insertEffect": {"sql":"insert into \"effects\" (\"id\", \"host_id\", \"proof_hash\", \"proof_id\", \"approval_id\", \"action_digest\", \"state\", \"started_at\") values ($1, $2, $3, $4, $5, $6, $7, $8)","slots":[{"name":"id"},{"name":"host_id"},{"name":"proof_hash"},{"name":"proof_id"},{"name":"approval_id"},{"name":"action_digest"},{"value":"intent"},{"name":"started_at"}]},
      "effectById": {"sql":"select * from \"effects\" where \"id\" = $1","slots":[{"name":"id"}]},
      "effectByProof": {"sql":"select * from \"effects\" where \"proof_hash\" = $1","slots":[{"name":"hash"}]},
      "finishEffect": {"sql":"update \"effects\" set \"state\" = $1, \"finished_at\" = $2, \"result_digest\" = $3, \"result\" = $4 where \"id\" = $5 and \"state\" = $6","slots":[{"name":"state"},{"name":"at"},{"name":"result_digest"},{"name":"result"},{"name":"id"},{"value":"intent"}]},
      "markUncertain": {"sql":"update \"effects\" set \"state\" = $1, \"finished_at\" = $2 where (\"host_id\" = $3 or \"host_id\" is null) and \"state\" = $4 returning *","slots":[{"value":"uncertain"},{"name":"at"},{"name":"host_id"},{"value":"intent"}]},
      "revoke": {"sql":"update \"proofs\" set \"state\" = $1, \"revoked_at\" = $2 where \"id\" = $3 and \"state\" = $4","slots":[{"value":"revoked"},{"name":"at"},{"name":"id"},{"value":"issued"}]},
    },
  },
  "tokenRules": {
    "sqlite": {
      "insertToken": {"sql":"insert into \"tokens\" (\"id\", \"name\", \"token_sha256\", \"audience\", \"created_at\", \"expires_at\", \"revoked_at\") values (?, ?, ?, ?, ?, ?, ?)","slots":[{"name":"id"},{"name":"name"},{"name":"token_sha256"},{"name":"audience"},{"name":"created_at"},{"name":"expires_at"},{"name":"revoked_at"}]},
      "tokenByHash": {"sql":"select * from \"tokens\" where \"token_sha256\" = ?","slots":[{"name":"token_sha256"}]},
      "tokenById": {"sql":"select * from \"tokens\" where \"id\" = ?","slots":[{"name":"id"}]},
      "listTokens": {"sql":"select * from \"tokens\" order by \"created_at\", \"id\"","slots":[]},
      "revokeToken": {"sql":"update \"tokens\" set \"revoked_at\" = ? where \"id\" = ? and \"revoked_at\" is null","slots":[{"name":"at"},{"name":"id"}]},
      "insertRule": {"sql":"insert into \"rules\" (\"id\", \"version\", \"tool\", \"args\", \"created_at\", \"expires_at\", \"revoked_at\", \"form\", \"pattern\", \"access\", \"agent\") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)","slots":[{"name":"id"},{"name":"version"},{"name":"tool"},{"name":"args"},{"name":"created_at"},{"name":"expires_at"},{"name":"revoked_at"},{"name":"form"},{"name":"pattern"},{"name":"access"},{"name":"agent"}]},
      "ruleById": {"sql":"select * from \"rules\" where \"id\" = ?","slots":[{"name":"id"}]},
      "listAllRules": {"sql":"select * from \"rules\" order by \"created_at\", \"id\"","slots":[]},
      "listActiveRules": {"sql":"select * from \"rules\" where (\"revoked_at\" is null or \"revoked_at\" > ?) and (\"expires_at\" is null or \"expires_at\" > ?) order by \"created_at\", \"id\"","slots":[{"name":"now"},{"name":"now"}]},
      "revokeRule": {"sql":"update \"rules\" set \"revoked_at\" = ? where \"id\" = ? and \"revoked_at\" is null","slots":[{"name":"at"},{"name":"id"}]},
    },
    "postgres": {
      "insertToken": {"sql":"insert into \"tokens\" (\"id\", \"name\", \"token_sha256\", \"audience\", \"created_at\", \"expires_at\", \"revoked_at\") values ($1, $2, $3, $4, $5, $6, $7)","slots":[{"name":"id"},{"name":"name"},{"name":"token_sha256"},{"name":"audience"},{"name":"created_at"},{"name":"expires_at"},{"name":"revoked_at"}]},
      "tokenByHash": {"sql":"select * from \"tokens\" where \"token_sha256\" = $1","slots":[{"name":"token_sha256"}]},
      "tokenById": {"sql":"select * from \"tokens\" where \"id\" = $1","slots":[{"name":"id"}]},
      "listTokens": {"sql":"select * from \"tokens\" order by \"created_at\", \"id\"","slots":[]},
      "revokeToken": {"sql":"update \"tokens\" set \"revoked_at\" = $1 where \"id\" = $2 and \"revoked_at\" is null","slots":[{"name":"at"},{"name":"id"}]},
      "insertRule": {"sql":"insert into \"rules\" (\"id\", \"version\", \"tool\", \"args\", \"created_at\", \"expires_at\", \"revoked_at\", \"form\", \"pattern\", \"access\", \"agent\") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)","slots":[{"name":"id"},{"name":"version"},{"name":"tool"},{"name":"args"},{"name":"created_at"},{"name":"expires_at"},{"name":"revoked_at"},{"name":"form"},{"name":"pattern"},{"name":"access"},{"name":"agent"}]},
      "ruleById": {"sql":"select * from \"rules\" where \"id\" = $1","slots":[{"name":"id"}]},
      "listAllRules": {"sql":"select * from \"rules\" order by \"created_at\", \"id\"","slots":[]},
      "listActiveRules": {"sql":"select * from \"rules\" where (\"revoked_at\" is null or \"revoked_at\" > $1) and (\"expires_at\" is null or \"expires_at\" > $2) order by \"created_at\", \"id\"","slots":[{"name":"now"},{"name":"now"}]},
      "revokeRule": {"sql":"update \"rules\" set \"revoked_at\" = $1 where \"id\" = $2 and \"revoked_at\" is null","slots":[{"name":"at"},{"name":"id"}]},
    },
  },
  "approvals": {
    "sqlite": {
      "insertApproval": {"sql":"insert into \"approvals\" (\"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)","slots":[{"name":"id"},{"name":"session_id"},{"name":"kind"},{"name":"server"},{"name":"tool"},{"name":"args"},{"name":"action"},{"name":"args_sha256"},{"name":"requested_at"},{"name":"expires_at"},{"name":"caller"},{"name":"handoff"},{"name":"state"},{"name":"channel"},{"name":"reason"},{"name":"scope"},{"name":"decided_at"},{"name":"owner"},{"name":"host_id"},{"name":"four_eyes"},{"name":"quorum"},{"name":"decided_by"},{"name":"decided_host"},{"name":"presence"}]},
      "approvalById": {"sql":"select \"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\" from \"approvals\" where \"id\" = ?","slots":[{"name":"id"}]},
      "lockApprovalById": {"sql":"select \"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\" from \"approvals\" where \"id\" = ?","slots":[{"name":"id"}]},
      "listApprovals": {"sql":"select \"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\" from \"approvals\" order by \"requested_at\", \"id\" limit ?","slots":[{"name":"limit"}]},
      "listApprovalsByState": {"sql":"select \"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\" from \"approvals\" where \"state\" = ? order by \"requested_at\", \"id\" limit ?","slots":[{"name":"state"},{"name":"limit"}]},
      "resolveApproval": {"sql":"update \"approvals\" set \"state\" = ?, \"channel\" = ?, \"reason\" = ?, \"scope\" = ?, \"decided_at\" = ?, \"decided_by\" = ?, \"decided_host\" = ? where \"id\" = ? and \"state\" = ?","slots":[{"name":"state"},{"name":"channel"},{"name":"reason"},{"name":"scope"},{"name":"decided_at"},{"name":"decided_by"},{"name":"decided_host"},{"name":"id"},{"value":"pending"}]},
      "insertVote": {"sql":"insert into \"approval_votes\" (\"approval_id\", \"principal\", \"host_id\", \"channel\", \"scope\", \"voted_at\") values (?, ?, ?, ?, ?, ?) on conflict (\"approval_id\", \"principal\") do nothing","slots":[{"name":"approval_id"},{"name":"principal"},{"name":"host_id"},{"name":"channel"},{"name":"scope"},{"name":"voted_at"}]},
      "votesOf": {"sql":"select * from \"approval_votes\" where \"approval_id\" = ? order by \"voted_at\", \"principal\"","slots":[{"name":"approval_id"}]},
      "votesOfPending": {"sql":"select \"v\".* from \"approval_votes\" as \"v\" inner join \"approvals\" as \"a\" on \"a\".\"id\" = \"v\".\"approval_id\" where \"a\".\"state\" = ? order by \"v\".\"voted_at\", \"v\".\"principal\"","slots":[{"value":"pending"}]},
    },
    "postgres": {
      "insertApproval": {"sql":"insert into \"approvals\" (\"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)","slots":[{"name":"id"},{"name":"session_id"},{"name":"kind"},{"name":"server"},{"name":"tool"},{"name":"args"},{"name":"action"},{"name":"args_sha256"},{"name":"requested_at"},{"name":"expires_at"},{"name":"caller"},{"name":"handoff"},{"name":"state"},{"name":"channel"},{"name":"reason"},{"name":"scope"},{"name":"decided_at"},{"name":"owner"},{"name":"host_id"},{"name":"four_eyes"},{"name":"quorum"},{"name":"decided_by"},{"name":"decided_host"},{"name":"presence"}]},
      "approvalById": {"sql":"select \"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\" from \"approvals\" where \"id\" = $1","slots":[{"name":"id"}]},
      "lockApprovalById": {"sql":"select \"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\" from \"approvals\" where \"id\" = $1 for update","slots":[{"name":"id"}]},
      "listApprovals": {"sql":"select \"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\" from \"approvals\" order by \"requested_at\", \"id\" limit $1","slots":[{"name":"limit"}]},
      "listApprovalsByState": {"sql":"select \"id\", \"session_id\", \"kind\", \"server\", \"tool\", \"args\", \"action\", \"args_sha256\", \"requested_at\", \"expires_at\", \"caller\", \"handoff\", \"state\", \"channel\", \"reason\", \"scope\", \"decided_at\", \"owner\", \"host_id\", \"four_eyes\", \"quorum\", \"decided_by\", \"decided_host\", \"presence\" from \"approvals\" where \"state\" = $1 order by \"requested_at\", \"id\" limit $2","slots":[{"name":"state"},{"name":"limit"}]},
      "resolveApproval": {"sql":"update \"approvals\" set \"state\" = $1, \"channel\" = $2, \"reason\" = $3, \"scope\" = $4, \"decided_at\" = $5, \"decided_by\" = $6, \"decided_host\" = $7, \"args\" = null, \"action\" = null where \"id\" = $8 and \"state\" = $9","slots":[{"name":"state"},{"name":"channel"},{"name":"reason"},{"name":"scope"},{"name":"decided_at"},{"name":"decided_by"},{"name":"decided_host"},{"name":"id"},{"value":"pending"}]},
      "insertVote": {"sql":"insert into \"approval_votes\" (\"approval_id\", \"principal\", \"host_id\", \"channel\", \"scope\", \"voted_at\") values ($1, $2, $3, $4, $5, $6) on conflict (\"approval_id\", \"principal\") do nothing","slots":[{"name":"approval_id"},{"name":"principal"},{"name":"host_id"},{"name":"channel"},{"name":"scope"},{"name":"voted_at"}]},
      "votesOf": {"sql":"select * from \"approval_votes\" where \"approval_id\" = $1 order by \"voted_at\", \"principal\"","slots":[{"name":"approval_id"}]},
      "votesOfPending": {"sql":"select \"v\".* from \"approval_votes\" as \"v\" inner join \"approvals\" as \"a\" on \"a\".\"id\" = \"v\".\"approval_id\" where \"a\".\"state\" = $1 order by \"v\".\"voted_at\", \"v\".\"principal\"","slots":[{"value":"pending"}]},
    },
  },
  "eventsCalls": {
    "sqlite": {
      "appendEvent": {"sql":"insert into \"events\" (\"kind\", \"ts\", \"session_id\", \"data\") values (?, ?, ?, ?)","slots":[{"name":"kind"},{"name":"ts"},{"name":"session_id"},{"name":"data"}]},
      "eventsSince": {"sql":"select \"seq\", \"kind\", \"ts\", \"session_id\", \"data\" from \"events\" where \"seq\" > ? order by \"seq\" limit ?","slots":[{"name":"cursor"},{"name":"limit"}]},
      "recordCall": {"sql":"insert into \"calls_in_progress\" (\"call_id\", \"session_id\", \"server\", \"tool\", \"args_sha256\", \"caller\", \"channel\", \"approval_id\", \"rule_id\", \"waited_ms\", \"authorized_at\") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)","slots":[{"name":"call_id"},{"name":"session_id"},{"name":"server"},{"name":"tool"},{"name":"args_sha256"},{"name":"caller"},{"name":"channel"},{"name":"approval_id"},{"name":"rule_id"},{"name":"waited_ms"},{"name":"authorized_at"}]},
      "endCall": {"sql":"delete from \"calls_in_progress\" where \"call_id\" = ?","slots":[{"name":"call_id"}]},
      "listCalls": {"sql":"select \"call_id\", \"session_id\", \"server\", \"tool\", \"args_sha256\", \"caller\", \"channel\", \"approval_id\", \"rule_id\", \"waited_ms\", \"authorized_at\" from \"calls_in_progress\" order by \"authorized_at\", \"call_id\"","slots":[]},
      "exportCursor": {"sql":"select \"seq\" from \"export_cursors\" where \"sink\" = ? and \"host_id\" = ?","slots":[{"name":"sink"},{"name":"host_id"}]},
      "advanceExportCursor": {"sql":"insert into \"export_cursors\" (\"sink\", \"host_id\", \"seq\", \"updated_at\") values (?, ?, ?, ?) on conflict (\"sink\", \"host_id\") do update set \"seq\" = case when \"excluded\".\"seq\" > \"export_cursors\".\"seq\" then \"excluded\".\"seq\" else \"export_cursors\".\"seq\" end, \"updated_at\" = \"excluded\".\"updated_at\"","slots":[{"name":"sink"},{"name":"host_id"},{"name":"seq"},{"name":"at"}]},
      "readMeta": {"sql":"select \"value\" from \"daemon_meta\" where \"key\" = ?","slots":[{"name":"key"}]},
      "writeMeta": {"sql":"insert into \"daemon_meta\" (\"key\", \"value\") values (?, ?) on conflict (\"key\") do update set \"value\" = \"excluded\".\"value\"","slots":[{"name":"key"},{"name":"value"}]},
      "announceHost": {"sql":"insert into \"hosts\" (\"host_id\", \"name\", \"revision\", \"updated_at\") values (?, ?, ?, ?) on conflict (\"host_id\") do update set \"name\" = \"excluded\".\"name\", \"revision\" = \"excluded\".\"revision\", \"updated_at\" = \"excluded\".\"updated_at\"","slots":[{"name":"host_id"},{"name":"name"},{"name":"revision"},{"name":"at"}]},
      "listHosts": {"sql":"select \"host_id\", \"name\", \"revision\", \"updated_at\" from \"hosts\" order by \"name\", \"host_id\"","slots":[]},
    },
    "postgres": {
      "appendEvent": {"sql":"insert into \"events\" (\"host_id\", \"kind\", \"ts\", \"session_id\", \"data\") values ($1, $2, $3, $4, $5) returning \"seq\"","slots":[{"name":"host_id"},{"name":"kind"},{"name":"ts"},{"name":"session_id"},{"name":"data"}]},
      "eventsSince": {"sql":"select \"seq\", \"kind\", \"ts\", \"session_id\", \"data\" from \"events\" where \"seq\" > $1 order by \"seq\" limit $2","slots":[{"name":"cursor"},{"name":"limit"}]},
      "recordCall": {"sql":"insert into \"calls_in_progress\" (\"host_id\", \"call_id\", \"session_id\", \"server\", \"tool\", \"args_sha256\", \"caller\", \"channel\", \"approval_id\", \"rule_id\", \"waited_ms\", \"authorized_at\") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)","slots":[{"name":"host_id"},{"name":"call_id"},{"name":"session_id"},{"name":"server"},{"name":"tool"},{"name":"args_sha256"},{"name":"caller"},{"name":"channel"},{"name":"approval_id"},{"name":"rule_id"},{"name":"waited_ms"},{"name":"authorized_at"}]},
      "endCall": {"sql":"delete from \"calls_in_progress\" where \"host_id\" = $1 and \"call_id\" = $2","slots":[{"name":"host_id"},{"name":"call_id"}]},
      "listCalls": {"sql":"select \"call_id\", \"session_id\", \"server\", \"tool\", \"args_sha256\", \"caller\", \"channel\", \"approval_id\", \"rule_id\", \"waited_ms\", \"authorized_at\" from \"calls_in_progress\" where \"host_id\" = $1 order by \"authorized_at\", \"call_id\"","slots":[{"name":"host_id"}]},
      "exportCursor": {"sql":"select \"seq\" from \"export_cursors\" where \"sink\" = $1 and \"host_id\" = $2","slots":[{"name":"sink"},{"name":"host_id"}]},
      "advanceExportCursor": {"sql":"insert into \"export_cursors\" (\"sink\", \"host_id\", \"seq\", \"updated_at\") values ($1, $2, $3, $4) on conflict (\"sink\", \"host_id\") do update set \"seq\" = case when \"excluded\".\"seq\" > \"export_cursors\".\"seq\" then \"excluded\".\"seq\" else \"export_cursors\".\"seq\" end, \"updated_at\" = \"excluded\".\"updated_at\"","slots":[{"name":"sink"},{"name":"host_id"},{"name":"seq"},{"name":"at"}]},
      "readMeta": {"sql":"select \"value\" from \"team_meta\" where \"key\" = $1","slots":[{"name":"key"}]},
      "writeMeta": {"sql":"insert into \"team_meta\" (\"key\", \"value\") values ($1, $2) on conflict (\"key\") do update set \"value\" = \"excluded\".\"value\"","slots":[{"name":"key"},{"name":"value"}]},
      "announceHost": {"sql":"insert into \"hosts\" (\"host_id\", \"name\", \"revision\", \"updated_at\") values ($1, $2, $3, $4) on conflict (\"host_id\") do update set \"name\" = \"excluded\".\"name\", \"revision\" = \"excluded\".\"revision\", \"updated_at\" = \"excluded\".\"updated_at\"","slots":[{"name":"host_id"},{"name":"name"},{"name":"revision"},{"name":"at"}]},
      "listHosts": {"sql":"select \"host_id\", \"name\", \"revision\", \"updated_at\" from \"hosts\" order by \"name\", \"host_id\"","slots":[]},
    },
  },
  "proofTables": {
    "sqlite": {
      "tables": ["create table if not exists \"proofs\" (\"id\" text primary key, \"hash\" text not null unique, \"approval_id\" text not null unique, \"principal\" text not null, \"session_id\" text not null, \"action_kind\" text not null, \"action_digest\" text not null, \"revision\" text not null, \"decision\" text not null, \"channel\" text not null, \"audience\" text not null, \"issued_at\" bigint not null, \"expires_at\" bigint not null, \"state\" text not null, \"consumed_at\" bigint, \"revoked_at\" bigint, \"effect_id\" text, \"host_id\" text not null)","create table if not exists \"effects\" (\"id\" text primary key, \"host_id\" text not null, \"proof_hash\" text not null unique, \"proof_id\" text not null, \"approval_id\" text not null, \"action_digest\" text not null, \"state\" text not null, \"started_at\" bigint not null, \"finished_at\" bigint, \"result_digest\" text, \"result\" text)"],
      "indexes": ["create index if not exists \"proofs_by_action\" on \"proofs\" (\"principal\", \"audience\", \"action_digest\", \"state\")","create index if not exists \"effects_open\" on \"effects\" (\"host_id\", \"state\")"],
    },
    "postgres": {
      "tables": ["create table if not exists \"proofs\" (\"id\" text primary key, \"hash\" text not null unique, \"approval_id\" text not null unique, \"principal\" text not null, \"session_id\" text not null, \"action_kind\" text not null, \"action_digest\" text not null, \"revision\" text not null, \"decision\" text not null, \"channel\" text not null, \"audience\" text not null, \"issued_at\" bigint not null, \"expires_at\" bigint not null, \"state\" text not null, \"consumed_at\" bigint, \"revoked_at\" bigint, \"effect_id\" text, \"host_id\" text not null)","create table if not exists \"effects\" (\"id\" text primary key, \"host_id\" text not null, \"proof_hash\" text not null unique, \"proof_id\" text not null, \"approval_id\" text not null, \"action_digest\" text not null, \"state\" text not null, \"started_at\" bigint not null, \"finished_at\" bigint, \"result_digest\" text, \"result\" text)"],
      "indexes": ["create index if not exists \"proofs_by_action\" on \"proofs\" (\"principal\", \"audience\", \"action_digest\", \"state\")","create index if not exists \"effects_open\" on \"effects\" (\"host_id\", \"state\")"],
    },
  },
};
