// Where a model is priced: the admin API's path of its price, and the Pricing page opened on it, linked from
// wherever the console shows a request refused because its model has no price (the log, the playground).
import { Link } from 'react-router';
import { useAuth } from './auth.tsx';

export const PRICING = '/api/pricing';

/** `/api/pricing/models/{model}`: a name with a `/` (`azure/gpt-4o`, `meta-llama/…`) is one segment, encoded. */
export const modelPath = (model: string) => `${PRICING}/models/${encodeURIComponent(model)}`;

/** The Pricing page with its form opened on `model`. */
export const pricingPage = (model: string) => `/pricing?${new URLSearchParams({ model })}`;

/** The model admission's refusal names (`model 'x' has no price and a budget applies …`), when it is one. */
const UNPRICED = /model '(.+?)' has no price/;

/** A link to price the model an error names for want of a price; nothing for any other error. */
export function UnpricedLink({ error }: { error: string | null | undefined }) {
  const { can } = useAuth();
  const model = UNPRICED.exec(error ?? '')?.[1];
  if (!model || !can('pricing:read')) return null;
  return (
    <Link to={pricingPage(model)} data-testid="price-it">
      {can('pricing:write') ? `Set the price of ${model}` : `See the prices of ${model}`} on the Pricing page
    </Link>
  );
}
