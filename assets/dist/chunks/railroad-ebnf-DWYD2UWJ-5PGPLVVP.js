import{a as r,b as o}from"./chunk-SMAKFE4G.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{r as RailroadEbnfModule,o as createRailroadEbnfServices};
