// `pnpm start`: the whole gateway in one process, no external service needed.
import {
  createLogger,
  embeddedEnvironmentSchema,
  exposureWarning,
  httpLimits,
  metricsExposureWarning,
  otlpTracesEndpoint,
} from '@gw/shared';
import { onShutdown, startService } from '@gw/shared/server';
import { startEmbeddedGateway } from './embedded-gateway.ts';

const logger = createLogger({ service: 'gateway' });
const service = { logger, schema: embeddedEnvironmentSchema, env: process.env };
await startService(service, async (resources, { environment, config }) => {
  const gateway = resources.use(
    await startEmbeddedGateway({
      config,
      logger,
      port: environment.PORT,
      host: environment.GW_HOST,
      dataDir: environment.GATEWAY_DATA_DIR,
      adminToken: environment.GATEWAY_ADMIN_TOKEN,
      oidcClientSecret: environment.GW_OIDC_CLIENT_SECRET,
      scimToken: environment.GW_SCIM_TOKEN,
      environment: process.env,
      limits: httpLimits(environment),
      metricsToken: environment.GW_METRICS_TOKEN,
      configPath: environment.GATEWAY_CONFIG,
      otlpEndpoint: otlpTracesEndpoint(environment),
      drainMs: environment.GW_SHUTDOWN_TIMEOUT_MS,
    }),
  );
  logger.info({ port: gateway.port, mode: 'embedded' }, 'gw listening');
  const exposed = exposureWarning(environment.GW_HOST, config.client);
  if (exposed) logger.warn(exposed);
  const metricsExposed = metricsExposureWarning(environment.GW_HOST, environment.GW_METRICS_TOKEN);
  if (metricsExposed) logger.warn(metricsExposed);
  onShutdown({ logger, deadlineMs: environment.GW_SHUTDOWN_TIMEOUT_MS, resources });
});
