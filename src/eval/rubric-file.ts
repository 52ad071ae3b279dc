/** Rubric files: `<eval dir>/rubrics/<id>.yaml`, parsed with the workflows' YAML limits. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { safeFileName } from '../security/path-safety.js';
import { parseWorkflowYaml } from '../workflow/parse.js';
import { ERROR_CODES, NotFoundError } from '../errors.js';
import { loadRubric, RUBRIC_ID, type LoadedRubric } from '../workflow/rubric.js';

function rubricNotFound(id: string): NotFoundError {
  return new NotFoundError(`rubric not found: ${id}`, ERROR_CODES.NOT_FOUND);
}

/** Reads `<rubricsDir>/<id>.yaml`. 404 for an unknown (or unsafe) id, 422 for an invalid file. */
export async function readRubricFile(rubricsDir: string, id: string): Promise<LoadedRubric> {
  if (!RUBRIC_ID.test(id)) throw rubricNotFound(id);
  let text: string;
  try {
    text = await readFile(join(rubricsDir, safeFileName(`${id}.yaml`)), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw rubricNotFound(id);
    throw error;
  }
  return loadRubric(parseWorkflowYaml(text, { field: 'rubric' }), id);
}
