/*
 * The plugin's components. Everything from the cluster is rendered as React text (escaped by
 * React); nothing here sets HTML.
 */
import { ApiProxy } from '@kinvolk/headlamp-plugin/lib';
import { SectionBox } from '@kinvolk/headlamp-plugin/lib/CommonComponents';
import { Box, Chip, Typography } from '@mui/material';
import React from 'react';
import { deletionState, humanDuration, markerText, ObjectMeta, overdueText } from './deleting';
import {
  errorLine,
  Explanation,
  explainPath,
  parseExplain,
  resourceName,
  ServiceRef,
} from './explain';

/** What the components need of a Headlamp KubeObject (or of plain JSON in the stories). */
export interface ObjectLike {
  kind?: string;
  metadata?: ObjectMeta;
  jsonData?: { kind?: string; apiVersion?: string; metadata?: ObjectMeta };
  pluralName?: string;
  apiVersion?: string;
}

export function metaOf(item: ObjectLike | null | undefined): ObjectMeta | undefined {
  return item?.jsonData?.metadata ?? item?.metadata;
}

/** A clock that ticks, so the durations move while the page is open. */
export function useNow(intervalMs = 5000): number {
  const [now, setNow] = React.useState(() => Date.now());
  React.useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(id);
  }, [intervalMs]);
  return now;
}

/** The list cell and the header's chip: "Deleting 5m (4m30s past deadline)", finalizers in
 * the tooltip and, in full, after it. */
export function DeletingMarker(props: { item: ObjectLike; full?: boolean }) {
  const now = useNow();
  const state = deletionState(metaOf(props.item), now);
  if (!state) return null;
  const label = `Deleting ${humanDuration(state.deletingSeconds)} (${overdueText(state.overdueSeconds)})`;
  return (
    <Box component="span" data-testid="kt-deleting" sx={{ display: 'inline-flex', gap: 1, alignItems: 'center', flexWrap: 'wrap' }}>
      <Chip
        size="small"
        color={state.overdueSeconds > 0 ? 'error' : 'warning'}
        label={label}
        title={markerText(state)}
      />
      {props.full !== false && state.finalizers.length > 0 && (
        <Typography component="span" variant="body2" data-testid="kt-finalizers">
          finalizers: {state.finalizers.join(', ')}
        </Typography>
      )}
    </Box>
  );
}

export type Request = (path: string) => Promise<unknown>;

/** Headlamp's own request: the current cluster, through its backend, to the API server. */
export const headlampRequest: Request = path => ApiProxy.request(path, {}, false);

function objectResource(item: ObjectLike): { resource: string; namespace?: string; name: string } | null {
  const meta = metaOf(item);
  const plural = item.pluralName ?? (item as any)?._class?.()?.pluralName;
  if (!meta?.name || !plural) return null;
  const apiVersion = item.jsonData?.apiVersion ?? item.apiVersion;
  return { resource: resourceName(plural, apiVersion), namespace: meta.namespace, name: meta.name };
}

type Answer = { state: 'loading' } | { state: 'error'; line: string } | { state: 'ok'; explanation: Explanation };

export function useExplanation(item: ObjectLike, service: ServiceRef, request: Request): Answer {
  const target = objectResource(item);
  const path = target ? explainPath(service, target.resource, target.namespace, target.name) : null;
  const [answer, setAnswer] = React.useState<Answer>({ state: 'loading' });
  React.useEffect(() => {
    let live = true;
    if (!path) {
      setAnswer({ state: 'error', line: 'Why is this stuck? needs the object\'s resource and name.' });
      return;
    }
    setAnswer({ state: 'loading' });
    request(path)
      .then(body => live && setAnswer({ state: 'ok', explanation: parseExplain(body) }))
      .catch(error => live && setAnswer({ state: 'error', line: errorLine(error, service) }));
    return () => {
      live = false;
    };
  }, [path, request, service.namespace, service.name, service.port]);
  return answer;
}

export function ExplanationView(props: { explanation: Explanation }) {
  const { blockers, warnings, unknowns } = props.explanation;
  if (blockers.length === 0) {
    return <Typography data-testid="kt-no-blocker">No blocker found.</Typography>;
  }
  const [main, ...others] = blockers;
  return (
    <Box data-testid="kt-explanation" sx={{ display: 'flex', flexDirection: 'column', gap: 1.5 }}>
      <Box>
        <Typography variant="subtitle2">Main blocker</Typography>
        <Typography data-testid="kt-main-blocker">
          <strong>{main.type}</strong>: {main.summary}
        </Typography>
        {main.confidence && (
          <Typography variant="body2" data-testid="kt-confidence">
            Confidence: {main.confidence}
            {main.confidenceBasis ? ` (${main.confidenceBasis})` : ''}
          </Typography>
        )}
      </Box>
      {main.evidence.length > 0 && (
        <Box>
          <Typography variant="subtitle2">Evidence</Typography>
          <ul data-testid="kt-evidence">
            {main.evidence.map((e, i) => (
              <li key={i}>
                {e.object ? `${e.object}: ` : ''}
                {e.message}
              </li>
            ))}
          </ul>
        </Box>
      )}
      {main.remedy.length > 0 && (
        <Box>
          <Typography variant="subtitle2">Remedies (safest first)</Typography>
          <ol data-testid="kt-remedies">
            {main.remedy.map((r, i) => (
              <li key={i}>
                {r.destructive && (
                  <Chip size="small" color="error" label="DESTRUCTIVE" data-testid="kt-destructive" sx={{ mr: 1 }} />
                )}
                {r.description}
                {r.when ? ` (only when ${r.when})` : ''}
                {r.command && (
                  <Box component="pre" sx={{ m: 0, mt: 0.5, whiteSpace: 'pre-wrap', fontFamily: 'monospace' }}>
                    {r.command}
                  </Box>
                )}
              </li>
            ))}
          </ol>
        </Box>
      )}
      {others.length > 0 && (
        <Box>
          <Typography variant="subtitle2">Also</Typography>
          <ul data-testid="kt-other-blockers">
            {others.map((b, i) => (
              <li key={i}>
                {b.type}: {b.summary}
                {b.confidence ? ` (${b.confidence})` : ''}
              </li>
            ))}
          </ul>
        </Box>
      )}
      {[...warnings, ...unknowns].map((w, i) => (
        <Typography key={i} variant="body2" color="text.secondary">
          {w}
        </Typography>
      ))}
    </Box>
  );
}

export function WhyStuck(props: { item: ObjectLike; service: ServiceRef; request?: Request }) {
  const answer = useExplanation(props.item, props.service, props.request ?? headlampRequest);
  if (answer.state === 'loading') return <Typography>Asking kubectl terminating…</Typography>;
  if (answer.state === 'error') return <Typography data-testid="kt-unavailable">{answer.line}</Typography>;
  return <ExplanationView explanation={answer.explanation} />;
}

/** The detail page's section: the marker from metadata (always), then serve's explanation. */
export function StuckSection(props: { item: ObjectLike; service: ServiceRef; request?: Request }) {
  const now = useNow();
  if (!deletionState(metaOf(props.item), now)) return null;
  return (
    <SectionBox title="Why is this stuck?">
      <Box data-testid="kt-section" sx={{ display: 'flex', flexDirection: 'column', gap: 2 }}>
        <DeletingMarker item={props.item} />
        <WhyStuck {...props} />
      </Box>
    </SectionBox>
  );
}
