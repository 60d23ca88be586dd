/*
 * The plugin's components in Storybook (the setup @kinvolk/headlamp-plugin ships), for the
 * browser test (tests/e2e/test_headlamp.py): "Live" reads a real object and asks a real serve
 * through Headlamp's own request() on the page's origin, where the test answers as the API
 * server would; "Hostile" renders markup in metadata and in an explanation as text.
 */
import { ApiProxy } from '@kinvolk/headlamp-plugin/lib';
import React from 'react';
import { DeletingMarker, ExplanationView, ObjectLike, StuckSection } from '../components';
import { parseExplain, ServiceRef } from '../explain';

export default {
  title: 'kubectl-terminating',
};

interface LiveArgs {
  resource: string;
  namespace: string;
  name: string;
  serviceNamespace: string;
  serviceName: string;
  servicePort: string;
}

function Live(args: LiveArgs) {
  const [item, setItem] = React.useState<ObjectLike | null>(null);
  const [failed, setFailed] = React.useState('');
  const path =
    args.resource === 'namespaces'
      ? `/api/v1/namespaces/${args.name}`
      : `/api/v1/namespaces/${args.namespace}/${args.resource}/${args.name}`;
  React.useEffect(() => {
    ApiProxy.request(path, {}, false)
      .then((json: any) => setItem({ jsonData: json, pluralName: args.resource, apiVersion: json.apiVersion }))
      .catch((e: Error) => setFailed(String(e.message)));
  }, [path]);
  const service: ServiceRef = { namespace: args.serviceNamespace, name: args.serviceName, port: args.servicePort };
  if (failed) return <p>could not read the object: {failed}</p>;
  if (!item) return <p>loading</p>;
  return (
    <div data-testid="kt-live" style={{ maxWidth: 1000 }}>
      <h3>
        {args.resource} {args.namespace ? `${args.namespace}/` : ''}
        {args.name}
      </h3>
      <StuckSection item={item} service={service} />
    </div>
  );
}

const text = { control: 'text' };
export const LiveObject = {
  render: (args: LiveArgs) => <Live {...args} />,
  args: {
    resource: 'pods',
    namespace: 'default',
    name: 'orphan-0',
    serviceNamespace: 'monitoring',
    serviceName: 'kubectl-terminating',
    servicePort: '9101',
  },
  argTypes: {
    resource: text,
    namespace: text,
    name: text,
    serviceNamespace: text,
    serviceName: text,
    servicePort: text,
  },
};

const SCRIPT = "<script>window.__pwned = 'script'</script>";
const IMAGE = '<img src=x onerror="window.__pwned = \'img\'">';

export const Hostile = {
  render: () => {
    const item = {
      metadata: {
        name: 'evil',
        namespace: 'default',
        deletionTimestamp: new Date(Date.now() - 90_000).toISOString(),
        finalizers: [SCRIPT, IMAGE],
      },
    };
    const explanation = parseExplain({
      kind: 'Pod',
      name: 'evil',
      blockers: [
        {
          type: 'finalizer',
          summary: `finalizer ${SCRIPT}`,
          confidence: IMAGE,
          evidence: [{ message: IMAGE, object: { kind: 'Pod', name: SCRIPT } }],
          remedy: [{ description: SCRIPT, command: IMAGE, destructive: true, when: IMAGE }],
        },
      ],
      warnings: [SCRIPT],
    });
    return (
      <div data-testid="kt-hostile">
        <DeletingMarker item={item} />
        <ExplanationView explanation={explanation} />
      </div>
    );
  },
};
