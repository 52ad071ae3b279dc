/** Service entry point (`npm start`): the HTTP service configured from the environment. */
import { runService } from './http/service.js';

await runService(process.env);
