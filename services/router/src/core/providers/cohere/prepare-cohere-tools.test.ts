import { GatewayError, type Tool } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { prepareCohereTools } from './prepare-cohere-tools.ts';

const weather: Tool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};
const time: Tool = { type: 'function', function: { name: 'get_time' } };
const cohereWeather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};
const cohereTime = {
  type: 'function',
  function: { name: 'get_time', parameters: { type: 'object', properties: {} } },
};

describe('prepareCohereTools', () => {
  it('sends nothing without tools', () => {
    expect(prepareCohereTools(undefined, 'required')).toEqual({});
    expect(prepareCohereTools([], undefined)).toEqual({});
  });

  it('omits tool_choice for auto (Cohere default) and when absent', () => {
    expect(prepareCohereTools([weather, time], 'auto')).toEqual({ tools: [cohereWeather, cohereTime] });
    expect(prepareCohereTools([weather, time], undefined)).toEqual({ tools: [cohereWeather, cohereTime] });
  });

  it('maps none and required to NONE and REQUIRED', () => {
    expect(prepareCohereTools([weather], 'none')).toEqual({ tools: [cohereWeather], tool_choice: 'NONE' });
    expect(prepareCohereTools([weather], 'required')).toEqual({
      tools: [cohereWeather],
      tool_choice: 'REQUIRED',
    });
  });

  it('maps a named function to REQUIRED with only that tool', () => {
    expect(prepareCohereTools([weather, time], { type: 'function', function: { name: 'get_time' } })).toEqual(
      {
        tools: [cohereTime],
        tool_choice: 'REQUIRED',
      },
    );
  });

  it('rejects a named function that is not among the tools', () => {
    expect(() => prepareCohereTools([weather], { type: 'function', function: { name: 'nope' } })).toThrow(
      GatewayError,
    );
  });

  it('sets strict_tools when a tool asks for strict mode', () => {
    const strict: Tool = { type: 'function', function: { ...weather.function, strict: true } };
    expect(prepareCohereTools([strict, time], 'auto')).toEqual({
      tools: [cohereWeather, cohereTime],
      strict_tools: true,
    });
  });
});
