import type {
  GuardrailProfile,
  GuardrailProfileInput,
  GuardrailRule,
  GuardrailRuleInput,
} from '@gw/admin/api-types';
import { useState } from 'react';
import { CrudSection } from '../crud.tsx';
import { display } from '../format.ts';
import { type ChatAnswer, sendChat } from '../gateway.ts';
import { useGatewayAddress } from '../gateway-address.ts';
import { Field, Form, PageHeader } from '../ui.tsx';
import { GuardrailProfileForm } from './guardrail-profile-form.tsx';
import { GuardrailRuleForm } from './guardrail-rule-form.tsx';

/**
 * "Test this text": the text sent through the gateway as a chat with a virtual key, so that the rules apply
 * exactly as they do to that key's requests; what they did is in the answer (a block, or `guardrails`).
 */
function TestText() {
  const [answer, setAnswer] = useState<ChatAnswer>();
  const known = useGatewayAddress();
  return (
    <Form
      label="Test this text"
      submit="Test"
      onSubmit={async (values) => {
        setAnswer(undefined);
        setAnswer(
          await sendChat({
            address: values.address || known?.address || location.origin,
            virtualKey: values.virtual_key ?? '',
            request: {
              model: values.model ?? '',
              messages: [{ role: 'user', content: values.text ?? '' }],
              stream: false,
            },
            onText: () => undefined,
          }),
        );
      }}
    >
      <Field label="Text" name="text" required placeholder="Mail me at ada@example.com" />
      <Field
        label="Virtual key"
        name="virtual_key"
        type="password"
        required
        hint="The rules that apply to this key's requests run."
      />
      <Field label="Model" name="model" required placeholder="openai/gpt-4o-mini" />
      <Field label="Gateway address" name="address" key={known?.address} defaultValue={known?.address} />
      {answer && (
        <p data-testid="guardrail-test" className={answer.status >= 400 ? 'bad' : 'ok'} role="status">
          {answer.status >= 400
            ? `Refused (${answer.status}): ${answer.error}`
            : `Let through (${answer.status}); guardrails: ${display(answer.extra.guardrails ?? 'none applied')}`}
        </p>
      )}
    </Form>
  );
}

export default function Guardrails() {
  return (
    <>
      <PageHeader title="Guardrails" />
      <p className="muted">
        Profiles say what to detect; rules say when and what to do (docs/guardrails.md).
      </p>
      <CrudSection<GuardrailProfile>
        title="Profiles"
        listPath="/api/guardrails/profiles"
        itemPath={(id) => `/api/guardrails/profiles/${encodeURIComponent(id)}`}
        writePermission="guardrails:write"
        editMethod="PUT"
        createTemplate={{ id: 'pii', type: 'builtin', pii: ['email'] } satisfies GuardrailProfileInput}
        form={({ item, submit, cancel }) => (
          <GuardrailProfileForm item={item} submit={submit} cancel={cancel} />
        )}
        columns={[
          { header: 'Id', cell: (item) => display(item.id) },
          { header: 'Type', cell: (item) => display(item.type) },
          {
            header: 'Settings',
            cell: (item) => (
              <code className="wrap">{display({ ...item, id: undefined, type: undefined })}</code>
            ),
          },
        ]}
      />
      <CrudSection<GuardrailRule>
        title="Rules"
        listPath="/api/guardrails/rules"
        itemPath={(id) => `/api/guardrails/rules/${encodeURIComponent(id)}`}
        writePermission="guardrails:write"
        editMethod="PUT"
        createTemplate={
          {
            id: 'redact-email',
            condition: 'true',
            action: 'REDACT',
            input_profiles: ['pii'],
          } satisfies GuardrailRuleInput
        }
        form={({ item, submit, cancel }) => <GuardrailRuleForm item={item} submit={submit} cancel={cancel} />}
        columns={[
          { header: 'Id', cell: (item) => display(item.id) },
          { header: 'Condition', cell: (item) => <code>{display(item.condition)}</code> },
          { header: 'Action', cell: (item) => display(item.action) },
          { header: 'Input profiles', cell: (item) => display(item.input_profiles) },
          { header: 'Output profiles', cell: (item) => display(item.output_profiles) },
        ]}
      />
      <TestText />
    </>
  );
}
