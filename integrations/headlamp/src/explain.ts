/*
 * What `serve`'s read-only API answers (GET /api/v1/explain/{resource}/[{namespace}/]{name},
 * one item of `kubectl terminating ... -o json`), read through the API server's service proxy.
 * Pure: no Headlamp import, tested with vitest. Everything here is text: the components render
 * it as React text nodes, never as HTML.
 */

/** Where `serve` answers: the Helm chart's Service (deploy/chart: `helm install
 * kubectl-terminating deploy/chart -n monitoring` names it kubectl-terminating, port 9101). */
export interface ServiceRef {
  namespace: string;
  name: string;
  port: string;
}

export const DEFAULT_SERVICE: ServiceRef = {
  namespace: 'monitoring',
  name: 'kubectl-terminating',
  port: '9101',
};

/** The settings as stored (strings a user typed), with the defaults for what is blank. */
export function serviceFrom(data: Record<string, unknown> | undefined | null): ServiceRef {
  const pick = (key: keyof ServiceRef) => {
    const value = data?.[key];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : DEFAULT_SERVICE[key];
  };
  return { namespace: pick('namespace'), name: pick('name'), port: pick('port') };
}

/** `pods`, `namespaces`, `widgets.example.com`: the resource as kubectl and serve name it. */
export function resourceName(pluralName: string, apiVersion: string | undefined): string {
  const slash = (apiVersion ?? '').indexOf('/');
  const group = slash > 0 ? apiVersion!.slice(0, slash) : '';
  return group ? `${pluralName}.${group}` : pluralName;
}

/** The service-proxy path of one object's explanation (cluster-scoped: no namespace). */
export function explainPath(
  service: ServiceRef,
  resource: string,
  namespace: string | undefined,
  name: string
): string {
  const seg = encodeURIComponent;
  const object = namespace ? `${seg(namespace)}/${seg(name)}` : seg(name);
  return (
    `/api/v1/namespaces/${seg(service.namespace)}/services/${seg(service.name)}:${seg(service.port)}` +
    `/proxy/api/v1/explain/${seg(resource)}/${object}`
  );
}

export interface EvidenceItem {
  message: string;
  object?: string; // "Kind namespace/name"
}

export interface RemedyItem {
  description: string;
  command?: string;
  destructive: boolean;
  when?: string;
}

export interface BlockerItem {
  type: string;
  summary: string;
  confidence?: string;
  confidenceBasis?: string;
  evidence: EvidenceItem[];
  remedy: RemedyItem[];
}

export interface Explanation {
  kind: string;
  namespace?: string;
  name: string;
  overdueSeconds?: number;
  finalizers: string[];
  blockers: BlockerItem[];
  warnings: string[];
  unknowns: string[];
}

type Json = Record<string, unknown>;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const strings = (value: unknown): string[] =>
  list(value).flatMap(v => (text(v) !== undefined ? [text(v)!] : []));

function objectRef(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  const name = text(value.name);
  if (!name) return undefined;
  const ns = text(value.namespace);
  return `${text(value.kind) ?? 'object'} ${ns ? `${ns}/` : ''}${name}`;
}

function blocker(value: unknown): BlockerItem[] {
  if (!isObject(value) || !text(value.type)) return [];
  return [
    {
      type: text(value.type)!,
      summary: text(value.summary) ?? '',
      confidence: text(value.confidence),
      confidenceBasis: text(value.confidenceBasis),
      evidence: list(value.evidence).flatMap(e =>
        isObject(e) && text(e.message) !== undefined
          ? [{ message: text(e.message)!, object: objectRef(e.object) }]
          : []
      ),
      remedy: list(value.remedy).flatMap(r =>
        isObject(r) && text(r.description) !== undefined
          ? [
              {
                description: text(r.description)!,
                command: text(r.command),
                destructive: r.destructive === true,
                when: text(r.when),
              },
            ]
          : []
      ),
    },
  ];
}

/** The explain answer, checked field by field (a malformed one throws one line). The main
 * blocker is the first: `-o json` lists blockers main first. */
export function parseExplain(body: unknown): Explanation {
  if (!isObject(body) || !text(body.name) || !text(body.kind)) {
    throw new Error('the answer is not a kubectl terminating explanation');
  }
  const overdue = body.overdueSeconds;
  return {
    kind: text(body.kind)!,
    namespace: text(body.namespace),
    name: text(body.name)!,
    overdueSeconds: typeof overdue === 'number' ? overdue : undefined,
    finalizers: strings(body.finalizers),
    blockers: list(body.blockers).flatMap(blocker),
    warnings: strings(body.warnings),
    unknowns: strings(body.unknowns),
  };
}

/** A failed request as one line. Headlamp's request() rejects with an Error whose `status` is
 * the HTTP code and whose message is "statusText - message of the Status". */
export function errorLine(error: unknown, service: ServiceRef): string {
  const where = `service ${service.namespace}/${service.name}:${service.port}`;
  const status = isObject(error) || error instanceof Error ? (error as { status?: unknown }).status : undefined;
  const raw = error instanceof Error ? error.message : text(error) ?? '';
  const detail = raw.split('\n')[0].slice(0, 300);
  switch (status) {
    case 403:
      return `Why is this stuck? is not available: you may not use services/proxy on ${where} (bind the chart's findings-viewer ClusterRole).`;
    case 404:
      // the API server's 404 names the Service ('services "NAME" not found'); serve's names
      // the object it was asked about ('pods "web-0" not found', '... is not terminating')
      if (!detail.includes(`services "${service.name}" not found`) && /not found|not terminating/.test(detail)) {
        return `kubectl terminating has no explanation for this object (${detail}).`;
      }
      return `Why is this stuck? is not available: ${where} was not found (install the chart, or set the service in the plugin's settings).`;
    case 502:
    case 503:
      return `Why is this stuck? is not available: ${where} did not answer (${detail || status}).`;
    default:
      return `Why is this stuck? could not be read from ${where}: ${detail || 'no answer'}.`;
  }
}
