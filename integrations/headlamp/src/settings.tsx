/* Where serve answers: the plugin's settings (Headlamp's Settings > Plugins), chart defaults. */
import { ConfigStore } from '@kinvolk/headlamp-plugin/lib';
import { TextField } from '@mui/material';
import React from 'react';
import { DEFAULT_SERVICE, serviceFrom, ServiceRef } from './explain';

export const PLUGIN_NAME = 'kubectl-terminating';
const store = new ConfigStore<Partial<ServiceRef>>(PLUGIN_NAME);

export function useService(): ServiceRef {
  const useConfig = store.useConfig();
  return serviceFrom(useConfig() as Record<string, unknown>);
}

export function Settings(props: { data?: Record<string, unknown>; onDataChange?: (d: Record<string, unknown>) => void }) {
  const data = props.data ?? {};
  const field = (key: keyof ServiceRef, label: string) => (
    <TextField
      key={key}
      label={label}
      placeholder={DEFAULT_SERVICE[key]}
      value={typeof data[key] === 'string' ? (data[key] as string) : ''}
      onChange={e => {
        const next = { ...data, [key]: e.target.value };
        store.update({ [key]: e.target.value });
        props.onDataChange?.(next);
      }}
      variant="outlined"
      margin="dense"
      fullWidth
    />
  );
  return (
    <>
      {field('namespace', 'Namespace of kubectl terminating serve')}
      {field('name', 'Service name')}
      {field('port', 'Service port')}
    </>
  );
}
