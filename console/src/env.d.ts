// esbuild bundles imported stylesheets into the hashed CSS asset (scripts/build-console.ts).
declare module '*.css';
