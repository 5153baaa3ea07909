import { GatewayError, type Tool } from '@gw/shared';

export interface CohereTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export interface CohereToolSettings {
  tools?: CohereTool[];
  tool_choice?: 'REQUIRED' | 'NONE';
  strict_tools?: true;
}

type OpenAiToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

function convertTool(tool: Tool): CohereTool {
  const { name, description, parameters } = tool.function;
  return {
    type: 'function',
    // Cohere requires a parameters schema, even for a tool without arguments.
    function: {
      name,
      ...(description === undefined ? {} : { description }),
      parameters: parameters ?? { type: 'object', properties: {} },
    },
  };
}

/**
 * OpenAI tools and tool_choice as Cohere's. Cohere has no "auto" value (it is the default) and cannot name
 * one function, so a named function becomes REQUIRED with the tool list narrowed to that function.
 * Cohere's `strict_tools` applies to every tool; it is set when any tool asks for strict mode.
 */
export function prepareCohereTools(
  tools: Tool[] | undefined,
  toolChoice: OpenAiToolChoice | undefined,
): CohereToolSettings {
  if (!tools || tools.length === 0) return {};
  let cohereTools = tools.map(convertTool);
  const strict = tools.some((tool) => tool.function['strict'] === true)
    ? { strict_tools: true as const }
    : {};
  if (toolChoice === undefined || toolChoice === 'auto') return { tools: cohereTools, ...strict };
  if (toolChoice === 'none') return { tools: cohereTools, tool_choice: 'NONE', ...strict };
  if (toolChoice === 'required') return { tools: cohereTools, tool_choice: 'REQUIRED', ...strict };
  const name = toolChoice.function.name;
  cohereTools = cohereTools.filter((tool) => tool.function.name === name);
  if (cohereTools.length === 0) {
    throw new GatewayError({
      type: 'invalid_request',
      message: `tool_choice names the function "${name}", which is not among the tools`,
      param: 'tool_choice',
    });
  }
  return { tools: cohereTools, tool_choice: 'REQUIRED', ...strict };
}
