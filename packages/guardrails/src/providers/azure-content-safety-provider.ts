import { type AzureContentSafetyProfile, type GuardrailSeverity, resolveSecret } from '@gw/shared';
import { request as send } from 'undici';
import { z } from 'zod';
import { type Detection, type GuardrailProvider, GuardrailProviderError } from '../guardrail-types.ts';
import type { ProviderOptions } from './provider-options.ts';

/** `text:analyze` takes at most 10k characters a call; longer texts are checked in pieces. */
const MOST_CHARACTERS = 10_000;

const analyzeResultSchema = z.looseObject({
  blocklistsMatch: z
    .array(
      z.looseObject({
        blocklistName: z.string(),
        blocklistItemId: z.string().optional(),
        blocklistItemText: z.string(),
      }),
    )
    .nullish(),
  categoriesAnalysis: z.array(z.looseObject({ category: z.string(), severity: z.number().int().nullish() })),
});

const azureErrorSchema = z.looseObject({ error: z.looseObject({ code: z.string(), message: z.string() }) });

function severityOf(level: number): GuardrailSeverity {
  return level >= 6 ? 'high' : level >= 4 ? 'medium' : 'low';
}

function pieces(text: string): string[] {
  if (text.length <= MOST_CHARACTERS) return [text];
  const result: string[] = [];
  for (let start = 0; start < text.length; start += MOST_CHARACTERS)
    result.push(text.slice(start, start + MOST_CHARACTERS));
  return result;
}

/**
 * Azure AI Content Safety, `POST {endpoint}/contentsafety/text:analyze` with the resource key in
 * `Ocp-Apim-Subscription-Key`: a category at or above the profile's threshold, or a blocklist hit, blocks
 * (the service classifies; it never rewrites).
 */
export function createAzureContentSafetyProvider(
  profile: AzureContentSafetyProfile,
  options: ProviderOptions,
): GuardrailProvider {
  const url = `${profile.endpoint.replace(/\/+$/, '')}/contentsafety/text:analyze?api-version=${encodeURIComponent(profile.api_version)}`;

  async function analyze(text: string, signal: AbortSignal) {
    const key = resolveSecret(profile.api_key, options.environment, options.secrets);
    if (!key)
      throw new GuardrailProviderError(
        `the api_key ${profile.api_key} has no value (an unset variable, or an unread secret reference)`,
      );
    const body = JSON.stringify({
      text,
      ...(profile.categories ? { categories: profile.categories } : {}),
      ...(profile.blocklist_names
        ? { blocklistNames: profile.blocklist_names, haltOnBlocklistHit: false }
        : {}),
      outputType: profile.output_type,
    });
    const answer = await send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'ocp-apim-subscription-key': key },
      body,
      signal,
      ...(options.outbound && { dispatcher: options.outbound.dispatcher }),
    });
    const payload: unknown = await answer.body.json().catch(() => undefined);
    if (answer.statusCode !== 200) {
      // Azure's error code only (a short identifier), never the endpoint's own text: the endpoint is the
      // operator's URL, and its answer must not be read back through gw.
      const failure = azureErrorSchema.safeParse(payload);
      const code = failure.success && /^[A-Za-z][A-Za-z0-9_.]{0,63}$/.test(failure.data.error.code);
      throw new GuardrailProviderError(
        `Azure Content Safety answered ${answer.statusCode}${code && failure.success ? ` (${failure.data.error.code})` : ''}`,
      );
    }
    const parsed = analyzeResultSchema.safeParse(payload);
    if (!parsed.success)
      throw new GuardrailProviderError('Azure Content Safety answered a body gw cannot read');
    return parsed.data;
  }

  return {
    type: 'azure_content_safety',
    async check(request) {
      const calls = request.texts.flatMap((text, index) =>
        text.trim() === '' ? [] : pieces(text).map((piece) => ({ index, piece })),
      );
      const results = await Promise.all(calls.map(({ piece }) => analyze(piece, request.signal)));
      const detections: Detection[] = [];
      results.forEach((result, position) => {
        const { index } = calls[position]!;
        for (const analysis of result.categoriesAnalysis) {
          const level = analysis.severity ?? 0;
          if (level < profile.severity_threshold) continue;
          detections.push({
            category: analysis.category,
            severity: severityOf(level),
            text: index,
            excerpt: `${analysis.category} severity ${level}`,
          });
        }
        for (const match of result.blocklistsMatch ?? []) {
          detections.push({
            category: `blocklist:${match.blocklistName}`,
            severity: 'high',
            text: index,
            excerpt: match.blocklistItemText,
          });
        }
      });
      return { detections };
    },
  };
}
