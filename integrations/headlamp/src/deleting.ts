/*
 * The "Deleting" marker from an object's own metadata: how long it has been deleting, how far
 * past its deadline, which finalizers remain. Pure: no Headlamp import, tested with vitest.
 */

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  finalizers?: string[];
}

export interface Deleting {
  /** seconds since the deletion was asked for (deletionTimestamp less the grace period) */
  deletingSeconds: number;
  /** seconds past the deadline (deletionTimestamp itself; for pods it includes the grace
   * period); negative while still inside it */
  overdueSeconds: number;
  finalizers: string[];
}

/**
 * kubectl's duration.HumanDuration (k8s.io/apimachinery/pkg/util/duration), as
 * kubectl_terminating/timeutil.py has it: "45s", "5m30s", "3h", "2d4h".
 */
export function humanDuration(seconds: number): string {
  const s = Math.trunc(seconds);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 60 * 2) return `${s}s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 10) return pair(minutes, 'm', s % 60, 's');
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(s / 3600);
  if (hours < 8) return pair(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return pair(Math.floor(hours / 24), 'd', hours % 24, 'h');
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8) return pair(Math.floor(days / 365), 'y', days % 365, 'd');
  return `${Math.floor(days / 365)}y`;
}

function pair(big: number, unit: string, rest: number, restUnit: string): string {
  return rest ? `${big}${unit}${rest}${restUnit}` : `${big}${unit}`;
}

/** The deletion state of an object, or null when it is not being deleted (or the timestamp
 * is unreadable: a marker with a made-up age would be worse than none). */
export function deletionState(meta: ObjectMeta | undefined, nowMs: number): Deleting | null {
  const stamp = meta?.deletionTimestamp;
  if (typeof stamp !== 'string' || stamp === '') return null;
  const deadline = Date.parse(stamp);
  if (Number.isNaN(deadline)) return null;
  const grace = Number(meta?.deletionGracePeriodSeconds) || 0;
  const overdue = Math.trunc((nowMs - deadline) / 1000);
  const finalizers = Array.isArray(meta?.finalizers)
    ? meta!.finalizers!.filter(f => typeof f === 'string')
    : [];
  return { deletingSeconds: overdue + grace, overdueSeconds: overdue, finalizers };
}

/** "3m10s past deadline" or "deadline in 20s". */
export function overdueText(overdueSeconds: number): string {
  return overdueSeconds >= 0
    ? `${humanDuration(overdueSeconds)} past deadline`
    : `deadline in ${humanDuration(-overdueSeconds)}`;
}

/** The marker's one line: "Deleting for 5m, 4m30s past deadline; finalizers: a, b". */
export function markerText(state: Deleting): string {
  const parts = [`Deleting for ${humanDuration(state.deletingSeconds)}`, overdueText(state.overdueSeconds)];
  const finalizers = state.finalizers.length ? `finalizers: ${state.finalizers.join(', ')}` : 'no finalizers';
  return `${parts.join(', ')}; ${finalizers}`;
}

/** A table cell's sort/filter value: empty for live objects, so they sort together. */
export function columnValue(state: Deleting | null): string {
  return state ? markerText(state) : '';
}
