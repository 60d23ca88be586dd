import { columnValue, deletionState, humanDuration, markerText, overdueText } from './deleting';

describe('humanDuration (kubectl HumanDuration)', () => {
  // the cases of apimachinery's duration_test.go TestHumanDuration and their edges
  it.each([
    [-2, '<invalid>'],
    [-1, '0s'],
    [0, '0s'],
    [1, '1s'],
    [119, '119s'],
    [120, '2m'],
    [121, '2m1s'],
    [9 * 60 + 59, '9m59s'],
    [10 * 60, '10m'],
    [10 * 60 + 59, '10m'],
    [3 * 3600 - 1, '179m'],
    [3 * 3600, '3h'],
    [3 * 3600 + 60, '3h1m'],
    [8 * 3600 - 1, '7h59m'],
    [8 * 3600, '8h'],
    [48 * 3600 - 1, '47h'],
    [48 * 3600, '2d'],
    [48 * 3600 + 3600, '2d1h'],
    [8 * 86400 - 1, '7d23h'],
    [8 * 86400, '8d'],
    [2 * 365 * 86400 - 1, '729d'],
    [2 * 365 * 86400, '2y'],
    [2 * 365 * 86400 + 86400, '2y1d'],
    [8 * 365 * 86400, '8y'],
    [1.9, '1s'],
  ])('%s s is %s', (seconds, text) => {
    expect(humanDuration(seconds)).toBe(text);
  });
});

describe('deletionState', () => {
  const now = Date.parse('2026-01-01T12:10:00Z');

  it('is null for an object not being deleted, or with an unreadable timestamp', () => {
    expect(deletionState({ name: 'a' }, now)).toBeNull();
    expect(deletionState(undefined, now)).toBeNull();
    expect(deletionState({ deletionTimestamp: 'yesterday' }, now)).toBeNull();
  });

  it("takes a pod's deadline from deletionTimestamp, which includes the grace period", () => {
    // deleted at 12:00:00 with 30s of grace: deletionTimestamp 12:00:30
    const state = deletionState(
      { deletionTimestamp: '2026-01-01T12:00:30Z', deletionGracePeriodSeconds: 30, finalizers: ['a/b'] },
      now
    )!;
    expect(state).toEqual({ deletingSeconds: 600, overdueSeconds: 570, finalizers: ['a/b'] });
    expect(markerText(state)).toBe('Deleting for 10m, 9m30s past deadline; finalizers: a/b');
  });

  it('is inside its deadline while deletionTimestamp is ahead', () => {
    const state = deletionState(
      { deletionTimestamp: '2026-01-01T12:10:20Z', deletionGracePeriodSeconds: 30 },
      now
    )!;
    expect(state.overdueSeconds).toBe(-20);
    expect(markerText(state)).toBe('Deleting for 10s, deadline in 20s; no finalizers');
  });

  it('counts a namespace (no grace period) from deletionTimestamp itself', () => {
    const state = deletionState({ deletionTimestamp: '2026-01-01T09:10:00Z', finalizers: ['kubernetes'] }, now)!;
    expect(overdueText(state.overdueSeconds)).toBe('3h past deadline');
    expect(columnValue(state)).toBe('Deleting for 3h, 3h past deadline; finalizers: kubernetes');
    expect(columnValue(null)).toBe('');
  });

  it('keeps only string finalizers (metadata is data, not trusted)', () => {
    const meta = { deletionTimestamp: '2026-01-01T12:00:00Z', finalizers: ['x', 3, null] as unknown as string[] };
    expect(deletionState(meta, now)!.finalizers).toEqual(['x']);
  });
});
