import{a as e,b as r}from"./chunk-F5JS2XHS.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{e as RailroadPegModule,r as createRailroadPegServices};
