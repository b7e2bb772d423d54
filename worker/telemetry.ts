/**
 * Optional OpenTelemetry tracing (workflows, activities, client calls) through
 * @temporalio/interceptors-opentelemetry 1.24.0 (OTel JS 1.x). On when VERO_OTEL_ENDPOINT (an OTLP/HTTP base
 * URL, e.g. http://collector:4318) is set; spans go to `<endpoint>/v1/traces` as OTLP JSON.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';

export function telemetryPlugins(env: NodeJS.ProcessEnv = process.env): OpenTelemetryPlugin[] {
  const endpoint = env.VERO_OTEL_ENDPOINT;
  if (!endpoint) return [];
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` });
  const resource = new Resource({ 'service.name': env.VERO_OTEL_SERVICE_NAME ?? 'vero-harbor-worker' });
  return [new OpenTelemetryPlugin({ resource, spanProcessor: new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 }) })];
}
