// R-AUD-5: each export sink's cursor (host, seq) is durable in both stores,
// moves only forward, and is kept per host (in team mode each host exports its own lines).
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeStoreServers, HOST_B, openStoreFixture, STORE_KINDS, type StoreFixture } from '../../helpers/stores.js';

const clock = { now: () => 1_000, monotonic: () => 1 };
let fixture: StoreFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});
afterAll(closeStoreServers);

describe.each(STORE_KINDS)('R-AUD-5 export cursors (%s)', (kind) => {
  it('start at 0, move forward only, survive a new connection, and are kept per sink and host', async () => {
    fixture = await openStoreFixture(kind, clock);
    const { store } = fixture;
    expect(await store.exportCursor('siem')).toBe(0);
    await store.advanceExportCursor('siem', 5, 1);
    await store.advanceExportCursor('siem', 3, 2);
    expect(await store.exportCursor('siem')).toBe(5);
    expect(await store.exportCursor('otel')).toBe(0);
    const again = await fixture.openAnother();
    expect(await again.exportCursor('siem')).toBe(5);
    const other = await fixture.openAnother(HOST_B);
    expect(await other.exportCursor('siem')).toBe(0);
    await other.advanceExportCursor('siem', 2, 3);
    expect(await store.exportCursor('siem')).toBe(5);
    expect(await other.exportCursor('siem')).toBe(2);
  });
});
