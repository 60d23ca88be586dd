import { readFileSync } from 'fs';
import { resolve } from 'path';
import { DEFAULT_SERVICE, errorLine, explainPath, parseExplain, resourceName, serviceFrom } from './explain';

// the CLI's golden `-o json` of stuck pods: the same items serve's explain answers with
const golden = JSON.parse(
  readFileSync(resolve(__dirname, '../../../tests/golden/pods/list.json'), 'utf8')
) as { items: Record<string, unknown>[] };
const item = (name: string) => golden.items.find(i => i.name === name)!;

describe('the service', () => {
  it("defaults to the Helm chart's Service (release kubectl-terminating in monitoring)", () => {
    expect(DEFAULT_SERVICE).toEqual({ namespace: 'monitoring', name: 'kubectl-terminating', port: '9101' });
    expect(serviceFrom(undefined)).toEqual(DEFAULT_SERVICE);
    expect(serviceFrom({ namespace: ' ops ', name: '', port: 8080 })).toEqual({
      namespace: 'ops',
      name: 'kubectl-terminating',
      port: '9101',
    });
  });

  it('builds the service-proxy path, namespaced and cluster-scoped', () => {
    expect(explainPath(DEFAULT_SERVICE, 'pods', 'batch', 'web-0')).toBe(
      '/api/v1/namespaces/monitoring/services/kubectl-terminating:9101/proxy/api/v1/explain/pods/batch/web-0'
    );
    expect(explainPath(DEFAULT_SERVICE, 'namespaces', undefined, 'team-a')).toBe(
      '/api/v1/namespaces/monitoring/services/kubectl-terminating:9101/proxy/api/v1/explain/namespaces/team-a'
    );
    expect(explainPath(DEFAULT_SERVICE, 'pods', 'a', '../x')).toContain('/explain/pods/a/..%2Fx');
  });

  it('names resources as kubectl does: plural, then the group', () => {
    expect(resourceName('pods', 'v1')).toBe('pods');
    expect(resourceName('widgets', 'example.com/v1')).toBe('widgets.example.com');
    expect(resourceName('deployments', 'apps/v1')).toBe('deployments.apps');
  });
});

describe('parseExplain', () => {
  it('reads the main blocker, its evidence and remedies, DESTRUCTIVE flagged', () => {
    const e = parseExplain(item('report-28461-x7k2p'));
    expect(e.blockers.map(b => b.type)).toEqual(['webhook', 'finalizer']);
    const [main] = e.blockers;
    expect(main.evidence[1]).toEqual({
      message: 'Service policy-system/policy-webhook has no ready endpoints',
      object: 'Service policy-system/policy-webhook',
    });
    expect(main.remedy.map(r => r.destructive)).toEqual([false, true]);
    expect(main.remedy[1].when).toMatch(/^the operator that served it is gone/);
    expect(e.finalizers).toEqual(['batch.kubernetes.io/job-tracking']);
  });

  it('carries confidence and its basis when the answer has them', () => {
    const answer = structuredClone(item('cache-0'));
    const blockers = answer.blockers as Record<string, unknown>[];
    blockers[0] = { ...blockers[0], confidence: 'certain', confidenceBasis: 'the Node object is gone' };
    const [main] = parseExplain(answer).blockers;
    expect([main.type, main.confidence, main.confidenceBasis]).toEqual([
      'node-missing',
      'certain',
      'the Node object is gone',
    ]);
  });

  it('refuses what is not an explanation, and drops malformed parts', () => {
    expect(() => parseExplain({ kind: 'Status', code: 404 })).toThrow('not a kubectl terminating explanation');
    expect(() => parseExplain('<html>')).toThrow();
    const e = parseExplain({
      kind: 'Pod',
      name: 'p',
      blockers: [{ summary: 'no type' }, { type: 't', evidence: [{ nope: 1 }], remedy: 'x' }],
    });
    expect(e.blockers).toEqual([
      { type: 't', summary: '', confidence: undefined, confidenceBasis: undefined, evidence: [], remedy: [] },
    ]);
  });
});

describe('errorLine', () => {
  const failed = (status: number, message: string) => Object.assign(new Error(message), { status });

  it('says the user may not use services/proxy on a 403', () => {
    const line = errorLine(failed(403, 'Forbidden - services "kubectl-terminating" is forbidden: ...'), DEFAULT_SERVICE);
    expect(line).toMatch(/may not use services\/proxy on service monitoring\/kubectl-terminating:9101/);
  });

  it("tells the API server's missing Service from serve's unknown object", () => {
    const absent = errorLine(failed(404, 'Not Found - services "kubectl-terminating" not found'), DEFAULT_SERVICE);
    expect(absent).toMatch(/was not found \(install the chart/);
    const unknown = errorLine(failed(404, 'Not Found - pods "web-0" not found'), DEFAULT_SERVICE);
    expect(unknown).toBe('kubectl terminating has no explanation for this object (Not Found - pods "web-0" not found).');
  });

  it('is one line whatever the error', () => {
    for (const error of [failed(503, 'no endpoints\navailable'), new Error('x\ny'), 'plain', undefined, {}]) {
      expect(errorLine(error, DEFAULT_SERVICE)).not.toContain('\n');
    }
    expect(errorLine(failed(503, 'Service Unavailable - no endpoints available for service'), DEFAULT_SERVICE)).toMatch(
      /did not answer/
    );
  });
});
