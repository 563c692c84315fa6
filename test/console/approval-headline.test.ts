// Guarantees (issue 18 item 4): an approval headline lists the binding's required input fields first, in the order
// the input schema's `required` gives them (a nested field's lines together, in their order), then every other
// line alphabetically by path; with no schema (the manifest is not available) every line is alphabetical.
import { describe, expect, it } from 'vitest';
import { headlineOrder } from '../../src/console/ui/approval-context.js';

const lines = (...paths: string[]) => paths.map((path) => ({ path, value: '1' }));

describe('headlineOrder', () => {
  it('required first in schema order, then the rest alphabetically', () => {
    const input = lines('zeta', 'well.row', 'alpha', 'well.col', 'volume_ul', 'tips[1]', 'tips[0]');
    const schema = { required: ['volume_ul', 'well'] };
    expect(headlineOrder(input, schema).map((l) => l.path)).toEqual([
      'volume_ul',
      'well.row',
      'well.col',
      'alpha',
      'tips[0]',
      'tips[1]',
      'zeta',
    ]);
  });

  it('without a schema or a required list, all alphabetical', () => {
    const input = lines('b', 'c', 'a');
    expect(headlineOrder(input, null).map((l) => l.path)).toEqual(['a', 'b', 'c']);
    expect(headlineOrder(input, { properties: {} }).map((l) => l.path)).toEqual(['a', 'b', 'c']);
  });
});
