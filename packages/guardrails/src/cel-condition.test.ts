import { describe, expect, it } from 'vitest';
import { ConditionError, compileCondition, type RequestMetadata } from './cel-condition.ts';

const metadata: RequestMetadata = {
  request_type: 'chat',
  model: 'gpt-4o-mini',
  provider: 'openai',
  headers: { 'x-team': 'support' },
  virtual_key: 'support-key',
  virtual_key_id: 'vk-1',
  team: 'team-1',
  customer: '',
  user: '',
  mcp_client: '',
  tool: '',
  arguments: {},
};

describe('CEL conditions', () => {
  it.each([
    ['true', true],
    ['virtual_key == "support-key"', true],
    ['model.startsWith("gpt-4o") && provider == "openai"', true],
    ['"x-team" in headers && headers["x-team"] == "support"', true],
    ['team in ["team-1", "team-2"]', true],
    ['customer != ""', false],
    ['request_type == "tool" && tool == "read_file"', false],
  ])('%s is %s', (expression, expected) => {
    expect(compileCondition(expression)(metadata)).toBe(expected);
  });

  it('sees the tool, its client and its arguments on MCP calls', () => {
    const condition = compileCondition(
      'mcp_client == "fs" && tool == "read_file" && arguments.path.startsWith("/etc")',
    );
    expect(
      condition({
        ...metadata,
        request_type: 'tool',
        mcp_client: 'fs',
        tool: 'read_file',
        arguments: { path: '/etc/passwd' },
      }),
    ).toBe(true);
  });

  it.each([
    ['model ==', 'Unexpected'],
    ['nope == 1', 'Unknown variable'],
    ['1 + 1', 'must be a bool'],
    ['model + 1 == "x"', ''],
  ])('refuses %s when it is compiled, not at a request', (expression, message) => {
    expect(() => compileCondition(expression)).toThrow(ConditionError);
    expect(() => compileCondition(expression)).toThrow(message);
  });

  it('bounds the size of an expression', () => {
    const huge = Array.from({ length: 300 }, (_, index) => `model == "m${index}"`).join(' || ');
    expect(() => compileCondition(huge)).toThrow(ConditionError);
  });

  it('throws at evaluation for a missing map key (the rule then does not apply)', () => {
    expect(() => compileCondition('headers["x-missing"] == "a"')(metadata)).toThrow();
  });
});
