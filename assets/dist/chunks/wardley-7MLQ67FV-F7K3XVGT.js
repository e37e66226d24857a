import{a as e,b as r}from"./chunk-TRIZAJNU.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{e as WardleyModule,r as createWardleyServices};
