/**
 * The pass-through family (docs/surfaces.md "Pass-through `/v1` family"): `/v1/<root>[/…]` forwarded to the provider's own API
 * with the gateway's provider key. `/v1/chat/completions` is not here: it is the governed, normalised path.
 * Ingress routes by it; the router's provider descriptors say which of them each provider offers.
 */
export const PASSTHROUGH_ROUTES = [
  { root: '/models', operation: 'models' },
  { root: '/completions', operation: 'completions' },
  { root: '/responses', operation: 'responses' },
  { root: '/images/generations', operation: 'images_generations' },
  { root: '/images/edits', operation: 'images_edits' },
  { root: '/images/variations', operation: 'images_variations' },
  { root: '/embeddings', operation: 'embeddings' },
  { root: '/audio/speech', operation: 'audio_speech' },
  { root: '/audio/transcriptions', operation: 'audio_transcriptions' },
  { root: '/files', operation: 'files' },
  { root: '/batches', operation: 'batches' },
  { root: '/count-tokens', operation: 'count_tokens' },
  { root: '/videos', operation: 'videos' },
  { root: '/containers', operation: 'containers' },
] as const;

export type PassthroughOperation = (typeof PASSTHROUGH_ROUTES)[number]['operation'];

export const PASSTHROUGH_OPERATIONS = PASSTHROUGH_ROUTES.map((route) => route.operation) as [
  PassthroughOperation,
  ...PassthroughOperation[],
];
