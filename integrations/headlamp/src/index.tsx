/*
 * kubectl terminating for Headlamp: a "Deleting" marker in the Pod and Namespace lists and on
 * every detail page (from the object's own metadata), and a "Why is this stuck?" section fed by
 * `kubectl terminating serve` through the API server's service proxy.
 */
import {
  registerDetailsViewHeaderAction,
  registerDetailsViewSection,
  registerPluginSettings,
  registerResourceTableColumnsProcessor,
} from '@kinvolk/headlamp-plugin/lib';
import React from 'react';
import { columnValue, deletionState } from './deleting';
import { DeletingMarker, metaOf, ObjectLike, StuckSection } from './components';
import { PLUGIN_NAME, Settings, useService } from './settings';

const LISTS = new Set(['headlamp-pods', 'headlamp-namespaces']);

registerResourceTableColumnsProcessor(function deletingColumn({ id, columns }) {
  if (!LISTS.has(id)) return columns;
  return [
    ...columns,
    {
      id: 'kubectl-terminating-deleting',
      label: 'Deleting',
      getValue: (item: ObjectLike) => columnValue(deletionState(metaOf(item), Date.now())),
      render: (item: ObjectLike) => <DeletingMarker item={item} full={false} />,
    },
  ] as typeof columns;
});

registerDetailsViewHeaderAction(function DeletingHeader(props: { item?: ObjectLike }) {
  return props?.item ? <DeletingMarker item={props.item} full={false} /> : null;
});

function Section(props: { resource: ObjectLike }) {
  const service = useService();
  return props.resource ? <StuckSection item={props.resource} service={service} /> : null;
}

registerDetailsViewSection(({ resource }: { resource: ObjectLike }) => <Section resource={resource} />);

registerPluginSettings(PLUGIN_NAME, Settings, true);
